package chat

import "context"

// Transcriber turns a voice note or an audio file into text.
type Transcriber interface {
	Transcribe(ctx context.Context, fileName string, audio []byte) (string, error)
}
