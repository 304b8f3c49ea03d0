package main

// joinLines returns the lines of each of sources, in order: what /status
// adds after its own (chat.WithStatusLines).
func joinLines(sources ...func() []string) func() []string {
	return func() []string {
		var out []string
		for _, f := range sources {
			out = append(out, f()...)
		}
		return out
	}
}
