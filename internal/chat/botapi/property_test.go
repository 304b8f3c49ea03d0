package botapi_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/markup"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// splitSecret writes s as Telegram HTML that shows it whole while no run
// of the markup holds it: cut at random places by random tags, with some
// characters as numeric entities.
func splitSecret(rng *rand.Rand, s string) string {
	tags := []string{"b", "i", "u", "s", "code"}
	var b strings.Builder
	for i := 0; i < len(s); {
		n := 1 + rng.IntN(6)
		if i+n > len(s) {
			n = len(s) - i
		}
		tag := tags[rng.IntN(len(tags))]
		wrap := rng.IntN(2) == 0
		if wrap {
			b.WriteString("<" + tag + ">")
		}
		for _, c := range []byte(s[i : i+n]) {
			switch rng.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "&#%d;", c)
			case 1:
				fmt.Fprintf(&b, "&#x%x;", c)
			default:
				b.WriteByte(c)
			}
		}
		if wrap {
			b.WriteString("</" + tag + ">")
		}
		i += n
	}
	return b.String()
}

// However markup splits a secret, the user never sees it whole, in a
// message, an edit or a caption; and a draft cut inside it (a partial
// text) never ends with its beginning.
func TestSplitSecretNeverShown(t *testing.T) {
	tg, c := newFake(t)
	ctx := t.Context()
	red := redactor.New([]string{secret})
	rng := rand.New(rand.NewPCG(11, 12))
	m, err := c.SendMessage(ctx, botapi.Message{ChatID: 1, Text: "start"})
	if err != nil {
		t.Fatal(err)
	}
	const head = "<b>so far</b>: "
	for i := range 300 {
		html := head + splitSecret(rng, secret) + " and after"
		if _, err := c.SendMessage(ctx, botapi.Message{ChatID: 1, Text: html, ParseMode: models.ParseModeHTML}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if _, err := c.EditMessageText(ctx, botapi.Edit{ChatID: 1, MessageID: m.ID, Text: html + fmt.Sprint(i), ParseMode: models.ParseModeHTML}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if _, err := c.SendPhoto(ctx, botapi.Upload{ChatID: 1, Data: []byte("png"), Caption: html, ParseMode: models.ParseModeHTML}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		// A preview that stops inside the secret, past its first byte.
		partial := markup.CutVisible(html, len("so far: ")+1+rng.IntN(len(secret)-1))
		if err := c.SendMessageDraft(ctx, botapi.Draft{ChatID: 1, ID: int64(i + 1), Text: partial, ParseMode: models.ParseModeHTML}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
	assertNeverShown(t, tg)
	drafts := tg.RequestsFor("sendMessageDraft")
	if len(drafts) != 300 {
		t.Fatalf("%d drafts, want 300", len(drafts))
	}
	for i, r := range drafts {
		shown := r.Params["text"]
		if r.Params["parse_mode"] == "HTML" {
			if shown, err = telegramtest.ParseHTML(shown); err != nil {
				t.Fatalf("draft %d is not valid HTML: %v", i, err)
			}
		}
		if red.RedactPartial(shown) != shown {
			t.Errorf("draft %d ends with the beginning of the secret (%d bytes shown)", i, len(shown))
		}
	}
}
