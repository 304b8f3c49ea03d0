package telegramtest

import (
	"time"

	"github.com/go-telegram/bot/models"
)

// DefaultToken is the bot token a Server accepts unless WithToken sets another.
// It has the shape of a real token (bot id, colon, secret), so that
// bot.Bot.ID works with it.
const DefaultToken = "4242424242:telegramtest-AAbbCCddEEffGGhh"

// Option configures a Server created by New.
type Option func(*config)

type config struct {
	token       string
	botUser     models.User
	noHTMLCheck bool
	waitTimeout time.Duration
	// webhookRetry is the pause before a failed delivery is made again.
	webhookRetry time.Duration
}

func defaultConfig() config {
	return config{
		token: DefaultToken,
		botUser: models.User{
			ID:        4242424242,
			IsBot:     true,
			FirstName: "Test Bot",
			Username:  "telegramtest_bot",
		},
		waitTimeout:  10 * time.Second,
		webhookRetry: 50 * time.Millisecond,
	}
}

// WithToken sets the only bot token the server accepts; requests made with any
// other token are answered 401 Unauthorized, as Telegram does.
func WithToken(token string) Option {
	return func(c *config) { c.token = token }
}

// WithBotUser sets the user that getMe returns and that sent messages come from.
func WithBotUser(user models.User) Option {
	return func(c *config) { c.botUser = user }
}

// WithoutHTMLValidation turns off the parsing of texts sent with parse_mode
// HTML; by default invalid HTML is answered 400 "can't parse entities".
func WithoutHTMLValidation() Option {
	return func(c *config) { c.noHTMLCheck = true }
}

// WithWaitTimeout sets how long MustWaitFor waits before it fails the test
// (10 seconds by default).
func WithWaitTimeout(d time.Duration) Option {
	return func(c *config) { c.waitTimeout = d }
}

// WithWebhookRetry sets the pause before a failed webhook delivery is made
// again (50 ms by default; Telegram's own back-off is longer).
func WithWebhookRetry(d time.Duration) Option {
	return func(c *config) { c.webhookRetry = d }
}
