package openaitest

import "time"

// defaultChunkSize is how many runes of text or tool-call arguments one
// streamed chunk carries unless an option or the response says otherwise.
const defaultChunkSize = 4

// Option configures a Server built by New.
type Option func(*config)

// config holds everything the options set; New copies it into the Server.
type config struct {
	chunkSize       int
	chunkDelay      time.Duration
	apiKey          string
	script          []Response
	responder       Responder
	transcripts     []Transcript
	transcriber     Transcriber
	recordLimit     int
	allowUnscripted bool
}

// WithChunkSize sets how many runes of text, and of each tool call's
// arguments, one streamed chunk carries. Values below 1 are ignored.
func WithChunkSize(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.chunkSize = n
		}
	}
}

// WithChunkDelay makes the server pause for d after every streamed chunk, so
// a test can observe deltas arriving one by one.
func WithChunkDelay(d time.Duration) Option {
	return func(c *config) { c.chunkDelay = d }
}

// WithAPIKey makes the server reject, with a 401 error worded like
// OpenAI's, every request whose Authorization header is not "Bearer key".
// The key never appears in the error message. Rejected requests are still
// recorded.
func WithAPIKey(key string) Option {
	return func(c *config) { c.apiKey = key }
}

// WithScript queues chat completion responses, as Server.Enqueue does.
func WithScript(responses ...Response) Option {
	return func(c *config) { c.script = append(c.script, responses...) }
}

// WithResponder sets the function that answers chat requests once the
// script is empty, as Server.Handle does.
func WithResponder(f Responder) Option {
	return func(c *config) { c.responder = f }
}

// WithTranscripts queues transcription responses, as
// Server.EnqueueTranscripts does.
func WithTranscripts(transcripts ...Transcript) Option {
	return func(c *config) { c.transcripts = append(c.transcripts, transcripts...) }
}

// Transcriber answers a transcription request.
type Transcriber func(req TranscriptionRequest) Transcript

// WithTranscriber sets the function that answers transcription requests
// once the queued transcripts are used up: a test with many voice notes at
// once (in no fixed order) answers each from its own audio.
func WithTranscriber(f Transcriber) Option {
	return func(c *config) { c.transcriber = f }
}

// WithRecordLimit keeps only the latest requests, at least n and at most
// 2n (values below 1 keep all), so that a soak of an hour does not hold
// every body in memory; Requests, ChatRequests, AllBodies and
// WaitForRequests then see only those.
func WithRecordLimit(n int) Option {
	return func(c *config) { c.recordLimit = n }
}

// AllowUnscripted stops the server from failing the test when a request
// arrives with nothing scripted for it. The request is still answered with
// the 500 error "fake openai: no scripted response".
func AllowUnscripted() Option {
	return func(c *config) { c.allowUnscripted = true }
}
