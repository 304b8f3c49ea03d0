package chat

import "strconv"

// counted returns n with the noun in its singular or plural form: "1
// queued message", "2 queued messages".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
