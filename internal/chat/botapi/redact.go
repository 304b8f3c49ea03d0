package botapi

import (
	"html"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// outgoing returns the text to send for text in mode, and the mode to send
// it in. The text is redacted as it is; in the HTML mode it is also checked
// as Telegram shows it, because tags and entities can split a secret that
// the markup alone does not show whole: when the visible text (or the
// markup with its entities decoded, which covers attribute values) holds a
// secret, the message is rebuilt as its redacted visible text, plain.
//
// partial marks a snapshot of a text still being written (a streamed
// preview): a trailing run of its visible text that could begin a secret
// is left out, as redactor.RedactPartial does, by cutting the HTML there.
func (c *Client) outgoing(method, text string, mode models.ParseMode, partial bool) (string, models.ParseMode) {
	red := c.s.red.Redact
	if partial {
		red = c.s.red.RedactPartial
	}
	out := red(text)
	if !strings.EqualFold(string(mode), string(models.ParseModeHTML)) {
		return out, mode
	}
	decoded := html.UnescapeString(out)
	visible := markup.Visible(out)
	shown := red(visible)
	switch {
	case c.s.red.Redact(decoded) != decoded:
	case !c.hidesAsShown(text):
		shown = red(markup.Visible(text))
	case shown == visible:
		return out, mode
	case partial && strings.HasPrefix(visible, shown):
		// Only a trailing run is held back: show the HTML up to it.
		if cut := markup.CutVisible(out, len(shown)); markup.Visible(cut) == shown {
			return cut, mode
		}
	}
	c.s.logger.Warn("a message's visible text held a secret; it goes out as redacted plain text", "method", method)
	return shown, ""
}

// hidesAsShown reports whether redacting the markup text hides what
// redacting it as Telegram shows it hides, in the visible text and in the
// markup with its entities decoded. It can hide less: a fragment of a
// secret redacted in the markup leaves visible the part of the secret that
// a tag or an entity split off.
func (c *Client) hidesAsShown(text string) bool {
	red := c.s.red.Redact(text)
	return c.s.red.Redact(markup.Visible(text)) == markup.Visible(red) &&
		c.s.red.Redact(html.UnescapeString(text)) == html.UnescapeString(red)
}

// redactKeyboard returns a copy of kb with every button's text, URL and
// callback data redacted; nil stays nil.
func (c *Client) redactKeyboard(kb *models.InlineKeyboardMarkup) *models.InlineKeyboardMarkup {
	if kb == nil {
		return nil
	}
	out := &models.InlineKeyboardMarkup{InlineKeyboard: make([][]models.InlineKeyboardButton, len(kb.InlineKeyboard))}
	for i, row := range kb.InlineKeyboard {
		out.InlineKeyboard[i] = make([]models.InlineKeyboardButton, len(row))
		for j, b := range row {
			b.Text = c.s.red.Redact(b.Text)
			b.URL = c.s.red.Redact(b.URL)
			b.CallbackData = c.s.red.Redact(b.CallbackData)
			out.InlineKeyboard[i][j] = b
		}
	}
	return out
}
