package chat

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Transcriber turns a voice note or an audio file into text, and names the
// language it heard when the speech service says ("" when it does not).
type Transcriber interface {
	Transcribe(ctx context.Context, fileName string, audio []byte) (text, language string, err error)
}

// voiceText is what the model is sent for a voice note: its transcript,
// marked as one (with the language when known), so that the model knows the
// words were heard, not typed, and may hold misheard ones.
func voiceText(transcript, language string) string {
	mark := "[Voice note, transcribed]"
	if language = strings.TrimSpace(language); language != "" {
		r, n := utf8.DecodeRuneInString(language)
		mark = "[Voice note, transcribed from " + string(unicode.ToUpper(r)) + language[n:] + "]"
	}
	return mark + "\n" + transcript
}
