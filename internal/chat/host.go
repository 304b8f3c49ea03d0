// Package chat is the Telegram host of the agent: it takes the updates
// (long polling, or a webhook), answers only the allowed users, runs one
// agent session per chat (per forum topic in forum groups) one turn at a
// time on a worker with its queue, streams the answers, shows tool
// progress with a Stop button, handles the commands, the buttons and the
// attachments, and keeps the chat settings; the inbound journal and each
// item's state are package ledger's. Every Bot API call goes through a
// botapi.Client, which redacts everything sent; rendering and splitting
// are the markup package's.
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/usage"
)

// ErrUnauthorized is what Run's error wraps when Telegram rejects the bot
// token (getMe answered 401): retrying cannot help, the token must change.
var ErrUnauthorized = errors.New("chat: telegram rejected the bot token")

// rejectedTokenError is Run's error when getMe answers 401: one sentence
// with the advice, which wraps ErrUnauthorized without repeating it.
type rejectedTokenError struct{}

// Error says what was rejected and what to do.
func (rejectedTokenError) Error() string {
	return "chat: telegram rejected TELEGRAM_BOT_TOKEN (401 Unauthorized): check the token with @BotFather"
}

// Unwrap returns ErrUnauthorized.
func (rejectedTokenError) Unwrap() error { return ErrUnauthorized }

// Config is what a Host needs; New checks it.
type Config struct {
	// Token is the bot token (TELEGRAM_BOT_TOKEN).
	Token string
	// APIURL is the Bot API server's base URL (TELEGRAM_API_URL); empty
	// means botapi.DefaultBaseURL.
	APIURL string
	// AllowedUserIDs are the only users the bot answers.
	AllowedUserIDs []int64
	// Agent runs the sessions; it must have been started.
	Agent *agent.Agent
	// Redactor is the last line of defence over everything sent to
	// Telegram (the agent's redactor, normally); required.
	Redactor *redactor.Redactor
	// AgentDir holds chat-settings.json, the inbound journal and the
	// heartbeat.
	AgentDir string
	// WorkspaceDir is the agent's working directory; documents are saved
	// under its inbox/.
	WorkspaceDir string
	// View is the agent sandbox's view (nil when the sandbox is off):
	// documents are saved through it, as the agent's file tools write,
	// since the agent may have made inbox/ a link to a place it may not
	// write (the agent dir).
	View *sandbox.View
	// DefaultTimeZone is the IANA zone of chats without /tz (empty: the
	// host's).
	DefaultTimeZone string
	// Model is the agent's default model, which /status and /model show
	// for a chat that has not switched.
	Model string
	// Models are the models a chat may switch to with /model
	// (OPENAI_MODELS); empty means switching is not configured.
	Models []string
	// ToolStatus is how turns show their tool calls (TOOL_STATUS): one of
	// ToolStatusAll, ToolStatusLast and ToolStatusOff; empty means
	// ToolStatusLast. A chat changes its own with /verbose.
	ToolStatus string
	// SilentToStrangers keeps the bot from telling users who are not
	// allowed their id and how to get access (STRANGER_REPLY=off).
	SilentToStrangers bool
}

// Option configures a Host built by New.
type Option func(*Host)

// WithLogger sets the logger (default: discard). Pass one that redacts.
func WithLogger(l *slog.Logger) Option { return func(h *Host) { h.logger = l } }

// WithJobBoard gives /jobs its jobs; without one /jobs says scheduling is
// not enabled.
func WithJobBoard(j JobBoard) Option { return func(h *Host) { h.jobs.board = j } }

// WithTranscriber sets the speech-to-text service for voice notes and audio;
// without one they get a reply saying transcription is not configured.
func WithTranscriber(t Transcriber) Option { return func(h *Host) { h.inbox.transcriber = t } }

// Host is the chat host: it polls Telegram and runs a worker per chat.
// It provides the scheduler's Chats (Prompt, Notify, Refused, TimeZone),
// handed to the scheduler's Start.
type Host struct {
	cfg    Config
	logger *slog.Logger
	// limit is the daily usage limit (see WithUsage), which the turns'
	// refusals log; meter holds it to it.
	limit usage.Limit
	// The front end's concerns, each holding the few things it needs
	// (wired by wireFrontEnd; the options fill in theirs).
	sessions  sessions
	meter     meter
	jobs      jobsView
	inbox     attachments
	models    modelSwitch
	strangers strangers
	commander commander
	// httpClient and retry configure the Bot API client; tests set them.
	httpClient    *http.Client
	retry         botapi.RetryPolicy
	editInterval  time.Duration
	pollTimeout   time.Duration
	shutdownGrace time.Duration

	// api is the Bot API under the retry policy: getMe, setMyCommands,
	// updates, files. Messages to a chat go through view's verbs.
	api *botapi.Client
	// view is what the chats see: streaming, tool status, delivery,
	// notices (turnview).
	view     *turnview.View
	allowed  map[int64]bool
	settings *settingsStore
	// statuses records the tool status messages open now; cutStatuses
	// are the ones the last run left open, edited when Run starts.
	statuses    *turnview.StatusLog
	cutStatuses []turnview.StatusRecord
	// asks are the approval requests waiting for a button.
	asks approvalBoard
	// front is what each turn's tools find of the chat on their context.
	front   frontEnd
	journal *ledger.Journal
	// out is how the front end talks to a chat outside a turn's answer
	// (see outlet).
	out chatOutlet
	// storage follows whether the agent dir takes writes, for the
	// heartbeat and the log.
	storage *storageHealth

	// turnCtx is the parent of every turn; cancelled at shutdown after the
	// chats were told.
	turnCtx    context.Context
	cancelTurn context.CancelFunc

	mu      sync.Mutex
	botUser models.User
	chats   map[string]*chatWorker
	closing bool
	workers sync.WaitGroup

	// newSessionGap, when set (tests), runs between the two steps of /new:
	// after the new session id is saved, before the old session is closed.
	newSessionGap func()
	// source delivers the updates (long polling unless a test or
	// WithWebhook replaces it).
	source updateSource
	// journalEvery journals every update taken, not only the messages
	// that start turns (webhook mode, see webhookSource).
	journalEvery bool
	// pollSleep waits out the back-off after a failed getUpdates and
	// reports whether the whole delay passed (sleep, unless a test
	// replaces it).
	pollSleep func(ctx context.Context, d time.Duration) bool
	// journalOpts are the inbound journal's test seams.
	journalOpts []ledger.Option
	// reportPause is the first pause before a report that did not go out
	// is sent again (see chatOutlet.report); tests shorten it.
	reportPause time.Duration
}

// New builds a host: it checks cfg, loads chat-settings.json (a file that
// does not parse is an error naming its path and the reason) and opens the
// inbound journal. Nothing is sent to Telegram before Run.
func New(cfg Config, opts ...Option) (*Host, error) {
	var errs []error
	if cfg.Token == "" {
		errs = append(errs, errors.New("chat: the bot token is empty"))
	}
	if cfg.Agent == nil {
		errs = append(errs, errors.New("chat: no agent"))
	}
	if cfg.Redactor == nil {
		errs = append(errs, errors.New("chat: no redactor: everything sent to Telegram must pass one"))
	}
	if len(cfg.AllowedUserIDs) == 0 {
		errs = append(errs, errors.New("chat: no allowed users"))
	}
	if cfg.AgentDir == "" || cfg.WorkspaceDir == "" {
		errs = append(errs, errors.New("chat: the agent dir and the workspace dir are required"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	h := &Host{
		cfg:           cfg,
		logger:        slog.New(slog.DiscardHandler),
		retry:         botapi.DefaultRetryPolicy(),
		editInterval:  time.Second,
		pollTimeout:   50 * time.Second,
		shutdownGrace: 5 * time.Second,
		allowed:       make(map[int64]bool, len(cfg.AllowedUserIDs)),
		chats:         make(map[string]*chatWorker),
		pollSleep:     backoff.Sleep,
		reportPause:   3 * time.Second,
	}
	h.source = pollSource{h}
	for _, o := range opts {
		o(h)
	}
	for _, id := range cfg.AllowedUserIDs {
		h.allowed[id] = true
	}
	h.storage = newStorageHealth(cfg.AgentDir, h.logger)
	var err error
	if h.settings, err = loadSettings(cfg.AgentDir); err != nil {
		return nil, err
	}
	h.settings.written = func(err error) {
		if err != nil {
			h.storage.failed(SettingsFile, err)
		} else {
			h.storage.wrote(SettingsFile)
		}
	}
	if h.journal, err = ledger.Open(cfg.AgentDir, h.logger, h.journalOpts...); err != nil {
		return nil, err
	}
	if h.statuses, h.cutStatuses, err = turnview.OpenStatusLog(cfg.AgentDir, h.logger); err != nil {
		// Cosmetic: without it a crash leaves its statuses as they were.
		h.logger.Warn("the tool status record cannot be opened; statuses a crash cuts stay as they were", "err", err)
		h.statuses, h.cutStatuses = nil, nil
	}
	if h.api, err = botapi.New(cfg.Token, cfg.Redactor, botapi.WithBaseURL(cfg.APIURL), botapi.WithHTTPClient(h.httpClient),
		botapi.WithLogger(h.logger), botapi.WithRetryPolicy(h.retry)); err != nil {
		h.journal.Close()
		return nil, fmt.Errorf("chat: %w", err)
	}
	h.turnCtx, h.cancelTurn = context.WithCancel(context.Background())
	h.view = turnview.New(h.api, turnview.Settings{Logger: h.logger, EditInterval: h.editInterval,
		Statuses: h.statuses, Shutdown: h.turnCtx, Background: &h.workers})
	h.out = chatOutlet{view: h.view, api: h.api, reports: newReporter(h.view, h.reportPause, h.turnCtx, h.logger)}
	h.front = newFrontEnd(h)
	wireFrontEnd(h)
	return h, nil
}

// Run talks to Telegram until ctx is done: it learns the bot's own user,
// registers the commands, reports the messages a crash or a restart
// interrupted, then polls (or serves the webhook, see WithWebhook). When
// ctx ends it stops fetching updates, tells the chats with a running turn
// that the bot is restarting, cancels the turns (their process groups die)
// and waits for them, bounded by the shutdown grace. It returns nil after
// a clean shutdown; an error wrapping ErrWebhookRejected when Telegram
// refuses the webhook.
func (h *Host) Run(ctx context.Context) error {
	defer h.journal.Close()
	defer h.statuses.Close()
	me, err := h.api.GetMe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			h.shutdown()
			return nil
		}
		if botapi.CodeOf(err) == 401 {
			return rejectedTokenError{}
		}
		if host, kind, ok := botapi.Unreachable(err); ok {
			return unreachableError{host: host, kind: kind}
		}
		return fmt.Errorf("chat: getMe: %w", err)
	}
	h.mu.Lock()
	h.botUser = *me
	h.mu.Unlock()
	if err := h.api.SetMyCommands(ctx, botCommands()); err != nil && ctx.Err() == nil {
		h.logger.Warn("setMyCommands failed", "err", err)
	}
	h.view.EditCut(h.cutStatuses)
	h.cutStatuses = nil
	reportInterrupted(h.journal, h.out, h.storage, h.logger)
	h.replayReceived(ctx)
	err = h.source.run(ctx, h.take)
	h.shutdown()
	return err
}

// shutdown tells the chats with a running turn that the bot is restarting,
// cancels every turn and waits for the workers. Only a turn whose answer
// has not begun to go out is told it was interrupted: one marked answering
// sends its answer (a delivery the shutdown cuts is reported after the
// restart as maybe cut short), and a running command is replayed.
func (h *Host) shutdown() {
	h.mu.Lock()
	h.closing = true
	type cut struct {
		t    target
		text string
	}
	var running []cut
	for _, w := range h.chats {
		w.close()
		if it := w.interrupt(); it != nil {
			running = append(running, cut{w.target, restartingText(it)})
		}
	}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	var wg sync.WaitGroup
	for _, c := range running {
		wg.Go(func() {
			h.out.sendText(ctx, c.t, c.text, 0)
		})
	}
	wg.Wait()
	cancel()
	h.cancelTurn()
	done := make(chan struct{})
	go func() { h.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(h.shutdownGrace):
		h.logger.Warn("shutdown: turns still running after the grace period")
	}
	h.view.WaitNotices(2 * time.Second)
}

// restartingText is the shutdown's notice of the running turn it.
func restartingText(it *workItem) string {
	if it.kind == itemPrompt {
		return "⚠️ The bot is restarting; the scheduled job “" + it.label + "” was interrupted. Once it is back, it tells you, and /retry runs it again."
	}
	return "⚠️ The bot is restarting; this turn was interrupted. Once it is back, it tells you each interrupted message, and /retry runs them all again, in order."
}

// Prompt queues a turn for target behind a running turn, like a user
// message; the answer is sent marked with label. It is the scheduler's way
// into a chat. It fails, queueing nothing, when the chat's queue is full or
// a prompt with the same label is still waiting in it.
//
// The prompt is journaled (fsync'd) before Prompt returns nil, as a
// message is before its update is acknowledged: a kill or a restart
// before its answer went out leaves it pending, and the restarted bot
// tells the chat that the scheduled job was interrupted, and /retry runs
// it again. When the journal cannot be written (a full disk) it fails
// with the cause, queueing nothing. While the host shuts down the prompt
// is journaled only, to be reported after the restart.
func (h *Host) Prompt(ctx context.Context, scope, label, prompt string) error {
	t, err := parseTarget(scope)
	if err != nil {
		return err
	}
	// The label is a job's name from jobs.json, which the agent can write,
	// and no agent event: redacted where it enters, since the journal
	// keeps it (persisted state is redacted like what leaves). Sends need
	// no pass of chat's own: botapi redacts each, its visible text too. The
	// prompt is journaled as it is: the agent cannot read the agent dir,
	// and /retry sends it to the model past the egress redaction.
	label = h.cfg.Redactor.Redact(label)
	scope = t.String()
	it := &workItem{kind: itemPrompt, label: label, content: []agent.Content{agent.Text(prompt)}}
	journal := func() error {
		o, err := h.journal.WritePrompt(scope, label, prompt)
		h.storage.journaled(err)
		if err == nil {
			it.origin, it.state = o, ledger.Queued
		}
		return err
	}
	w, err := h.worker(t)
	if err != nil {
		// Shutting down: the chat is told after the restart.
		if err := journal(); err != nil {
			return fmt.Errorf("chat: prompt %q for %s not journaled: %w", label, scope, err)
		}
		return nil
	}
	if _, _, err := w.enqueueWith(it, journal); err != nil {
		return fmt.Errorf("chat: prompt %q for %s not queued: %w", label, scope, err)
	}
	return nil
}

// TimeZone returns target's IANA zone: its /tz, else the default zone.
func (h *Host) TimeZone(scope string) string { return h.sessions.timeZone(scope) }
