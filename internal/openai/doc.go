// Package openai is the project's one use of go-openai: [Provider], the
// agent's model provider over an OpenAI-compatible chat-completions API
// (streaming, retries with Retry-After, an idle timeout, errors as
// *agent.ProviderError), and [Transcriber], speech to text over the same
// kind of API's /audio/transcriptions. No other package imports go-openai.
package openai
