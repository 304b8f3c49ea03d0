package telegramtest

import (
	"net/http"
	"strings"

	"github.com/go-telegram/bot/models"
)

// Shown returns every text a user could have seen from the bot, decoded
// as Telegram shows it: the text of each accepted sendMessage,
// editMessageText and sendMessageDraft (HTML parsed in the HTML parse
// mode, entities decoded), the caption and the file name of each accepted
// upload, each button's text, and each callback answer's toast. A test
// that must prove a secret never reached the user's screen scans these,
// since a secret split by markup (sk-ab<b>cd</b>ef) shows whole here while
// no request body holds it.
func (s *Server) Shown() []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Status != http.StatusOK {
			continue
		}
		for _, field := range []string{"text", "caption"} {
			if v, ok := r.Params[field]; ok && r.Method != "setMyCommands" {
				out = append(out, shownText(v, r.Params["parse_mode"]))
			}
		}
		for _, f := range r.Files {
			out = append(out, f.Filename)
		}
		var kb models.InlineKeyboardMarkup
		if r.Has("reply_markup") && r.DecodeParam("reply_markup", &kb) == nil {
			for _, row := range kb.InlineKeyboard {
				for _, b := range row {
					out = append(out, b.Text)
				}
			}
		}
	}
	return out
}

// shownText returns what a user sees of text sent in parseMode.
func shownText(text, parseMode string) string {
	if !strings.EqualFold(parseMode, "HTML") {
		return text
	}
	visible, err := ParseHTML(text)
	if err != nil {
		return text
	}
	return visible
}
