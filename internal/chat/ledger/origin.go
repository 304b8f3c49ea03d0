package ledger

import "strconv"

// Origin is what an entry stands for: a Telegram update, by its update
// id, or a scheduled prompt, by the number the journal gave it
// (Journal.WritePrompt). The two never meet: a prompt moves neither the
// polling offset nor the dedupe of update ids. The zero Origin is none,
// an item the journal does not hold.
//
// In the file a prompt's number is written as a negative id, as journals
// have always held it (Telegram's update ids are positive), so that a
// journal of an earlier version still loads.
type Origin struct {
	prompt bool
	n      int64
}

// Update returns the origin of the Telegram update id (none for 0).
func Update(id int64) Origin { return Origin{n: id} }

// IsZero reports whether o is no origin.
func (o Origin) IsZero() bool { return o.n == 0 }

// IsPrompt reports whether o is a scheduled prompt's.
func (o Origin) IsPrompt() bool { return o.prompt }

// UpdateID returns the update id of an update's origin, 0 for a prompt's.
func (o Origin) UpdateID() int64 {
	if o.prompt {
		return 0
	}
	return o.n
}

// String names o for a log line or a test failure.
func (o Origin) String() string {
	if o.prompt {
		return "prompt " + strconv.FormatInt(o.n, 10)
	}
	return "update " + strconv.FormatInt(o.n, 10)
}

// key is o's id in the file: the update id, or the prompt's number negated.
func (o Origin) key() int64 {
	if o.prompt {
		return -o.n
	}
	return o.n
}

// originOf reads an id of the file.
func originOf(key int64) Origin {
	if key < 0 {
		return Origin{prompt: true, n: -key}
	}
	return Origin{n: key}
}
