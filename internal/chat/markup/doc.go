// Package markup turns the Markdown a model writes into Telegram's HTML
// parse mode and cuts texts to Telegram's length limit: RenderHTML for the
// rendering (tables as aligned monospace blocks), SplitMessage and
// SplitPlain for the 4096 UTF-16 units of a message, never breaking a code
// block, a tag, an entity or a character, and Visible for the text a user
// sees of rendered HTML, which is also the plain fallback when Telegram
// rejects the markup. It knows nothing of the Bot API or of the chat.
package markup
