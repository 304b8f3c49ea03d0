package chat

import (
	"context"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestClassifyMentions checks that a group message is for the bot only when
// an entity says so, and that the bot's mention is cut from the text.
func TestClassifyMentions(t *testing.T) {
	me := models.User{ID: 42, IsBot: true, Username: "the_bot"}
	h := &Host{logger: slog.New(slog.DiscardHandler), allowed: map[int64]bool{userID: true}, botUser: me}
	mention := func(off, n int) models.MessageEntity {
		return models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: off, Length: n}
	}
	tests := []struct {
		name     string
		text     string
		entities []models.MessageEntity
		want     string // the text the agent gets; "-" when ignored
	}{
		{"mention entity", "@the_bot hello", []models.MessageEntity{mention(0, 8)}, "hello"},
		{"mention in other case", "hi @The_Bot!", []models.MessageEntity{mention(3, 8)}, "hi !"},
		{"after an emoji", "🙂 @the_bot go", []models.MessageEntity{mention(3, 8)}, "🙂  go"},
		{"text without an entity", "@the_bot hello", nil, "-"},
		{"a longer name", "@the_bot_fan hello", []models.MessageEntity{mention(0, 12)}, "-"},
		{"another user", "@someone hello", []models.MessageEntity{mention(0, 8)}, "-"},
		{"text mention", "Bot, hello", []models.MessageEntity{{Type: models.MessageEntityTypeTextMention, Offset: 0, Length: 3, User: &me}}, "Bot, hello"},
		{"not for the bot", "just chatting", nil, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &models.Update{ID: 1, Message: &models.Message{
				ID: 1, Text: tt.text, Entities: tt.entities,
				From: &models.User{ID: userID},
				Chat: models.Chat{ID: -100, Type: models.ChatTypeSupergroup},
			}}
			got := "-"
			if in := h.classifyUpdate(u); in != nil {
				got = in.text
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

// The strangers remembered for the Info log's rate limit stay bounded:
// adding one drops those logged more than an hour ago, and at maxStrangers
// the oldest goes; an id logged within the hour stays quiet.
func TestRememberStranger(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	// full holds maxStrangers ids from 1, id i logged i seconds ago.
	full := func() map[int64]time.Time {
		m := make(map[int64]time.Time, maxStrangers)
		for i := 1; i <= maxStrangers; i++ {
			m[int64(i)] = ago(time.Duration(i) * time.Second)
		}
		return m
	}
	withChange := func(m map[int64]time.Time, drop, add int64) map[int64]time.Time {
		m = maps.Clone(m)
		delete(m, drop)
		m[add] = now
		return m
	}
	tests := []struct {
		name     string
		seen     map[int64]time.Time
		id       int64
		wantLoud bool
		want     map[int64]time.Time
	}{
		{"a new id", map[int64]time.Time{}, 7, true, map[int64]time.Time{7: now}},
		{"an id logged within the hour", map[int64]time.Time{7: ago(59 * time.Minute)}, 7, false,
			map[int64]time.Time{7: ago(59 * time.Minute)}},
		{"an id logged an hour ago", map[int64]time.Time{7: ago(time.Hour)}, 7, true, map[int64]time.Time{7: now}},
		{"adding drops the ids logged over an hour ago", map[int64]time.Time{1: ago(2 * time.Hour), 2: ago(time.Hour), 3: ago(59 * time.Minute)}, 9, true,
			map[int64]time.Time{3: ago(59 * time.Minute), 9: now}},
		{"at the cap the oldest goes", full(), maxStrangers + 1, true, withChange(full(), maxStrangers, maxStrangers+1)},
		{"at the cap a known id is quiet", full(), 5, false, full()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := maps.Clone(tt.seen)
			if got := rememberStranger(seen, tt.id, now, strangerLogInterval); got != tt.wantLoud {
				t.Errorf("logged at Info = %v, want %v", got, tt.wantLoud)
			}
			if diff := cmp.Diff(tt.want, seen); diff != "" {
				t.Errorf("remembered strangers (-want +got):\n%s", diff)
			}
		})
	}
}

// A host that hears from ever new strangers remembers at most maxStrangers
// of them, and still logs each new one at Info.
func TestStrangersAreCapped(t *testing.T) {
	rec := newLogRecorder()
	s := &strangers{logger: rec.logger(), logged: make(map[int64]time.Time)}
	const n = maxStrangers + 10
	for id := int64(1); id <= n; id++ {
		s.note(id, id)
	}
	s.note(n, n)
	if got := len(s.logged); got != maxStrangers {
		t.Errorf("remembered strangers = %d, want %d", got, maxStrangers)
	}
	if got := len(rec.find(isLog(slog.LevelInfo, "not in TELEGRAM_ALLOWED_USER_IDS"))); got != n {
		t.Errorf("Info log lines = %d, want %d (one for each new stranger)", got, n)
	}
	if got := len(rec.find(isLog(slog.LevelDebug, "not allowed"))); got != 1 {
		t.Errorf("Debug log lines = %d, want 1 (the last stranger again)", got)
	}
}

// A message the bot cannot read (a video, a round video, a sticker, a GIF,
// a location, a contact, a poll) gets a reply naming its kind, and no
// model call, even with a caption.
func TestUnsupportedKindsAreAnswered(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "echo: " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	tests := []struct {
		name string
		set  func(*models.Message)
		want string
	}{
		{"video", func(m *models.Message) { m.Video = &models.Video{FileID: "v1"}; m.Caption = "what is this?" }, "I can't read videos yet"},
		{"video note", func(m *models.Message) { m.VideoNote = &models.VideoNote{FileID: "vn1"} }, "I can't read round video messages yet"},
		{"sticker", func(m *models.Message) { m.Sticker = &models.Sticker{FileID: "s1"} }, "I can't read stickers yet"},
		{"animation", func(m *models.Message) {
			// Telegram sends a GIF as a document too.
			m.Animation = &models.Animation{FileID: "a1"}
			m.Document = &models.Document{FileID: "a1", FileName: "a.gif.mp4"}
		}, "I can't read GIFs yet"},
		{"location", func(m *models.Message) { m.Location = &models.Location{Latitude: 52.5, Longitude: 13.4} }, "I can't read locations yet"},
		{"contact", func(m *models.Message) { m.Contact = &models.Contact{PhoneNumber: "+100", FirstName: "Ann"} }, "I can't read contacts yet"},
		{"poll", func(m *models.Message) { m.Poll = &models.Poll{ID: "p1", Question: "tea?"} }, "I can't read polls yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := h.tg.Send(userID, userID, tt.set)
			m := h.waitText(userID, tt.want)
			if diff := cmp.Diff(tt.want+" — send text, a voice note, a photo or a file.", m.Visible); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			if m.ReplyTo != sent.ID {
				t.Errorf("the reply answers message %d, want %d", m.ReplyTo, sent.ID)
			}
		})
	}
	// Updates are handled in order: had any of them started a turn, the
	// model would have been asked before this message's turn.
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "echo: hi")
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once (for the text only)", n)
	}
}

// A stranger in a private chat is told their id once a day, with no model
// call; in a group they are not; STRANGER_REPLY=off silences the reply.
func TestStrangerReply(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	h := newHarness(t, harnessConfig{provider: faux})
	const other = int64(3003)
	h.tg.SendText(strangerID, strangerID, "hello?")
	h.tg.SendText(strangerID, strangerID, "hello??")
	h.tg.SendText(-500, other, "@bot hi")
	h.tg.SendText(other, other, "me too")
	h.waitText(other, "Your Telegram user id is 3003; ask its operator to add it to TELEGRAM_ALLOWED_USER_IDS.")
	h.waitText(strangerID, "This is a private bot. Your Telegram user id is 2002;")
	// The allowed user's turn comes after the strangers' messages: once it
	// is answered, they have all been handled.
	faux.Enqueue(agenttest.FauxText("for the allowed user"))
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "for the allowed user")
	if n := len(h.tg.Messages(strangerID)); n != 1 {
		t.Errorf("the stranger got %d replies to two messages, want 1", n)
	}
	if n := len(h.tg.Messages(-500)); n != 0 {
		t.Errorf("the group got %d messages", n)
	}
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("model requests = %d, want 1 (the allowed user's)", n)
	}

	faux = agenttest.NewFauxProvider(agenttest.FauxText("for the allowed user"))
	h = newHarness(t, harnessConfig{provider: faux, silentToStrangers: true})
	h.tg.SendText(strangerID, strangerID, "hello?")
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "for the allowed user")
	if n := len(h.tg.Messages(strangerID)); n != 0 {
		t.Errorf("with STRANGER_REPLY=off the stranger got %d messages", n)
	}
}

// The stranger reply's memory: once per id and day, at most maxStrangers
// ids.
func TestStrangerReplyInterval(t *testing.T) {
	seen := map[int64]time.Time{}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	steps := []struct {
		at   time.Duration
		want bool
	}{{0, true}, {time.Hour, false}, {23 * time.Hour, false}, {24 * time.Hour, true}, {25 * time.Hour, false}}
	for _, s := range steps {
		if got := rememberStranger(seen, strangerID, now.Add(s.at), strangerReplyInterval); got != s.want {
			t.Errorf("reply after %v: %v, want %v", s.at, got, s.want)
		}
	}
}
