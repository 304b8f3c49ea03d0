package chaostest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

var (
	long     = flag.Bool("chaos.long", false, "run the soak: more chats, longer, more restarts")
	seedFlag = flag.Uint64("chaos.seed", 0, "the run's seed (0: a fresh one, printed)")
	duration = flag.Duration("chaos.duration", 20*time.Minute, "how long the long form sends messages")
)

// params size one run.
type params struct {
	chats, perChat int
	// think is the longest a user pauses after an outcome before the next
	// message.
	think time.Duration
	// kills is how many times the bot is killed (0: one per 45 s of load).
	kills int
	// load is how long the messages are spread over (the long form).
	load time.Duration
	// floodOdds: one message in floodOdds starts a flood, a burst sent
	// without waiting that overruns the chat's queue.
	floodOdds int
	// contextWindow is MODEL_CONTEXT_WINDOW: small, so that long sessions
	// are compacted.
	contextWindow int
}

func shortParams() params {
	return params{chats: 8, perChat: 12, think: 1500 * time.Millisecond, kills: 4, floodOdds: 60, contextWindow: 3072}
}

func longParams() params {
	return params{chats: 24, think: 6 * time.Second, load: *duration, floodOdds: 400, contextWindow: 8192}
}

// settleBase and settlePerMessage size the settle deadline: the calm
// after the load gets settleBase plus settlePerMessage for every message
// still without an outcome (queued behind others in its chat, or reported
// and waiting for /retry).
const (
	settleBase       = 2 * time.Minute
	settlePerMessage = 4 * time.Second
)

// patience is how long a user waits for an outcome before sending the
// next message anyway.
const patience = 2 * time.Minute

// floodSize is how many messages a flood sends at once: more than the
// chat's queue holds (20), so some are refused, and told so.
const floodSize = 24

// soakDiskSize is the tmpfs the long form's agent dir lives on: room for
// an hour's transcripts, journal and usage log of its chats (a few MB
// every ten minutes), filled up by the ballast in each disk-full phase.
const soakDiskSize = 128 << 20

// diskFullEvery and diskFullHold pace the long form's disk-full phases.
const (
	diskFullEvery = 12 * time.Minute
	diskFullHold  = 20 * time.Second
)

// tagPattern finds a message's tag (m<chat>-<n>) in what the model is sent.
var tagPattern = regexp.MustCompile(`m\d+-\d+`)

// lockedRand is the run's seeded source, shared by the fault injectors.
type lockedRand struct {
	mu sync.Mutex
	r  *mrand.Rand
}

func (l *lockedRand) intN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func (l *lockedRand) dur(max time.Duration) time.Duration {
	return time.Duration(l.intN(int(max/time.Millisecond)+1)) * time.Millisecond
}

func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary under faults for minutes")
	}
	p := shortParams()
	if *long {
		p = longParams()
	}
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos seed %d (rerun with -chaos.seed=%d)", seed, seed)
	rng := &lockedRand{r: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}

	bin := buildBot(t)
	secret := plantedSecret(t)
	users := make([]int64, p.chats)
	for i := range users {
		users[i] = int64(5001 + i)
	}
	tg := telegramtest.New(t, telegramtest.WithWaitTimeout(5*time.Minute))
	proxy := newFaultProxy(t, tg.URL(), rng)
	m := newModel(rng, proxy, secret)
	oa := openaitest.New(t, openaitest.WithChunkSize(4), openaitest.WithChunkDelay(2*time.Millisecond),
		openaitest.WithResponder(m.respond), openaitest.WithTranscriber(m.transcribe),
		openaitest.WithRecordLimit(2000))
	// The long form keeps its agent dir on a small disk that fills up now
	// and then (diskFullPhase); it skips where a tmpfs cannot be mounted.
	var disk *tmpfstest.Disk
	agentDir, ws := t.TempDir(), t.TempDir()
	if *long {
		disk = tmpfstest.Mount(t, soakDiskSize)
		agentDir = disk.Dir
	}
	env := append(botEnv(tg, proxy.url, oa.URL(), agentDir, ws, users, secret),
		"MODEL_CONTEXT_WINDOW="+strconv.Itoa(p.contextWindow))
	sup := &supervisor{t: t, bin: bin, env: env, agentDir: agentDir, rng: rng, compacting: m.compacting}
	sup.start()
	t.Cleanup(sup.stopFinal)

	// The load: every chat is a user who sends a message (a voice note
	// now and then) and mostly waits for its outcome (the answer, an
	// error, the busy answer of a full queue, an interrupted report)
	// before the next; now and then one sends without waiting, and rarely
	// floods the chat past its queue. A few chats also /stop, and are left
	// out of the exactly-once accounting (a /stop drops the queued
	// messages, as it says).
	rec := &record{sent: map[string]sentMessage{}}
	var wg sync.WaitGroup
	loadEnd := time.Now().Add(p.load)
	for ci, uid := range users {
		stopper := ci%7 == 6
		wg.Go(func() {
			n := 0
			done := func() bool {
				return p.perChat > 0 && n >= p.perChat || p.perChat == 0 && time.Now().After(loadEnd)
			}
			send := func() (string, sentMessage) {
				tag := fmt.Sprintf("m%d-%d", ci, n)
				n++
				var msg models.Message
				voice := rng.intN(8) == 0
				if voice {
					msg = tg.SendVoice(uid, uid, []byte("OggS chaos voice note "+tag))
				} else {
					msg = tg.SendText(uid, uid, "please handle "+tag)
				}
				sm := sentMessage{chat: uid, id: msg.ID, at: time.Now(), stopper: stopper, voice: voice}
				rec.add(tag, sm)
				return tag, sm
			}
			for !done() {
				switch r := rng.intN(20); {
				case r == 0:
					tg.SendText(uid, uid, "/help")
				case r == 1 && stopper:
					tg.SendText(uid, uid, "/stop")
				}
				tag, sm := send()
				switch {
				case rng.intN(p.floodOdds) == 0 || p.perChat > 0 && ci == 0 && n == 3:
					for range floodSize {
						tag, sm = send()
					}
				case rng.intN(6) == 0:
					// Sent without waiting: it queues behind the last.
					time.Sleep(rng.dur(p.think))
					continue
				}
				// A user told that the message was interrupted says
				// /retry (which runs every interrupted message of the
				// chat) and waits for the answer, or a new report.
				if o := waitOutcome(tg, tag, sm, proxy, outcome{}); o.reported && o.answers == 0 && !o.failed {
					tg.SendText(uid, uid, "/retry")
					waitOutcome(tg, tag, sm, proxy, o)
				}
				time.Sleep(rng.dur(p.think))
			}
		})
	}
	// Telegram's own errors, injected while the load runs. A method's
	// failure is queued only when its last one was answered: Telegram
	// fails requests, it keeps no backlog of failures. A queue fed at this
	// pace outgrew a bot whose back-off had reached its minute between
	// polls, and the bot never polled again (two runs stuck so).
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		fail := func(method string, n, code int, description string, retryAfter int) {
			if tg.PendingFailures(method) == 0 {
				tg.FailNext(method, n, code, description, retryAfter)
			}
		}
		for !proxy.quiet() {
			switch rng.intN(6) {
			case 0:
				fail("sendMessage", 1, 429, "", 1)
			case 1:
				fail("sendMessage", 1, 502, "Bad Gateway", 0)
			case 2:
				fail("getUpdates", 1, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0)
			case 3:
				fail("getUpdates", 1, 429, "", 2)
			case 4:
				fail("sendMessageDraft", 2, 500, "Internal Server Error", 0)
			case 5:
				fail("sendChatAction", 1, 429, "", 1)
			}
			time.Sleep(rng.dur(3*time.Second) + time.Second)
		}
	}()
	// Duplicated updates: Telegram sends an update it already sent.
	go func() {
		for !proxy.quiet() {
			time.Sleep(rng.dur(5*time.Second) + 2*time.Second)
			proxy.duplicateNext()
		}
	}()
	// The kills, each of a kind in turn: a SIGKILL at a random moment, one
	// the moment the journal is written, a SIGTERM, one while a compaction
	// summary streams; and a restart as a supervisor would. The files are
	// checked after each.
	kills := p.kills
	span := 40 * time.Second
	if *long {
		kills, span = int(p.load/(45*time.Second)), p.load
	}
	killsDone := make(chan struct{})
	go func() {
		defer close(killsDone)
		for k := range kills {
			time.Sleep(rng.dur(span/time.Duration(kills)) + 3*time.Second)
			sup.kill(killKind(k % int(numKillKinds)))
			checkFiles(t, agentDir)
		}
	}()
	// The disk fills up: in the long form, once in every diskFullEvery of
	// the load, for diskFullHold or up to twice that, while the load and
	// the kills go on.
	diskDone := make(chan int, 1)
	go func() {
		n := 0
		defer func() { diskDone <- n }()
		if disk == nil {
			return
		}
		phases := max(1, int(p.load/diskFullEvery))
		slot := p.load / time.Duration(phases)
		for i := range phases {
			time.Sleep(rng.dur(max(slot-4*time.Minute, 0)) + 30*time.Second)
			hold := diskFullHold + rng.dur(diskFullHold)
			sup.note("disk-full phase %d: filling the agent dir, held %v once the healthcheck says so", i+1, hold)
			err := diskFullPhase(t, disk, bin, env, hold, func() {})
			sup.note("disk-full phase %d: over", i+1)
			if err != nil {
				t.Errorf("disk-full phase %d: %v", i+1, err)
				continue
			}
			n++
		}
	}()
	wg.Wait()
	<-killsDone
	diskPhases := <-diskDone
	proxy.setQuiet()
	<-faultsDone

	// Settle: every accepted message is answered or reported; a reported
	// one is retried (in its own chat, once per report) until answered.
	// The deadline grows with the work still open.
	st := rec.classify(tg)
	open := len(st.lostTags) + len(st.waitingReported)
	settle := settleBase + time.Duration(open)*settlePerMessage
	t.Logf("settling: %d messages without an outcome yet, %d reported; allowing %v", len(st.lostTags), len(st.waitingReported), settle)
	deadline := time.Now().Add(settle)
	retried := map[int64]time.Time{}
	for {
		st = rec.classify(tg)
		if len(st.lostTags) == 0 && len(st.waitingReported) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("not settled: %d messages without an outcome: %v; %d reported but not answered after /retry", len(st.lostTags), st.lostTags, len(st.waitingReported))
			break
		}
		// /retry runs what the chat's queue holds: it is sent again
		// while reported messages wait.
		for _, chat := range st.retryChats() {
			if time.Since(retried[chat]) > 15*time.Second {
				retried[chat] = time.Now()
				tg.SendText(chat, chat, "/retry")
			}
		}
		time.Sleep(time.Second)
	}
	sup.stopFinal()
	checkFiles(t, agentDir)
	st = rec.classify(tg)
	var dups []string
	for _, tag := range slices.Sorted(maps.Keys(st.answers)) {
		if n := st.answers[tag]; n > 1 {
			t.Errorf("%s answered %d times", tag, n)
			dups = append(dups, tag)
		}
	}
	if len(st.lostTags) > 0 {
		t.Errorf("lost (neither answered nor reported): %v", st.lostTags)
	}
	if odd := slices.Concat(st.lostTags, st.waitingReported, dups); len(odd) > 0 {
		keepEvidence(t, sup, tg, rec, agentDir, odd)
		for _, tag := range odd[:min(len(odd), 5)] {
			m := rec.sent[tag]
			for _, b := range tg.Messages(m.chat) {
				if b.ReplyTo == m.id || strings.Contains(b.Visible, tag) {
					t.Logf("chat %d: message %d (reply to %d): %q", m.chat, b.ID, b.ReplyTo, b.Visible)
				}
			}
			t.Logf("%s was message %d", tag, m.id)
			for line := range strings.SplitSeq(sup.log(), "\n") {
				if strings.Contains(line, tag) {
					t.Logf("log: %s", line)
				}
			}
		}
	}
	if m.secretSeen.Load() {
		t.Errorf("the planted secret (%d bytes) reached the model in a request's messages", len(secret))
	}
	checkNoSecret(t, secret, tg, oa, sup, agentDir)
	peak := sup.peakRSS()
	if peak > 300*1024 {
		t.Errorf("peak VmRSS %d kB is above 300 MB", peak)
	}
	if th := sup.peakThreads(); th > 200 {
		t.Errorf("peak threads %d is above 200", th)
	}
	rt := summarize(sup.runtimeSamples())
	if bound := 100 + 20*p.chats; rt.peakGoroutines > bound {
		t.Errorf("peak goroutines %d is above %d", rt.peakGoroutines, bound)
	}
	t.Logf("\n%s", st.tableWith(tableInput{
		seed: seed, restarts: sup.restartCounts(), peakRSS: peak, peakThreads: sup.peakThreads(),
		diskPhases: diskPhases, runtime: rt, compactions: int(m.compactions.Load()), transcriptions: int(m.transcriptions.Load()),
		contextWindow: p.contextWindow, firstPrompt: int(m.firstPrompt.Load()), peakPrompt: int(m.peakPrompt.Load()),
	}))
}

// keepEvidence writes what a failed run needs to be understood into the
// test's artifact dir (kept with go test -artifacts): the bot's whole log
// with the supervisor's notes of starts, kills and full disks (it names no
// message text, so the chats' messages go beside it, with their ids and
// times), the chats of the messages in question (open or answered twice)
// and the journal.
func keepEvidence(t *testing.T, sup *supervisor, tg *telegramtest.Server, rec *record, agentDir string, tags []string) {
	dir := t.ArtifactDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Errorf("keeping %s: %v", name, err)
		}
	}
	write("bot.log", []byte(sup.log()))
	if data, err := os.ReadFile(filepath.Join(agentDir, "inbound.jsonl")); err == nil {
		write("inbound.jsonl", data)
	}
	rec.mu.Lock()
	sent := maps.Clone(rec.sent)
	rec.mu.Unlock()
	chats := map[int64]bool{}
	for _, tag := range tags {
		chats[sent[tag].chat] = true
	}
	for chat := range chats {
		var b strings.Builder
		for _, tag := range slices.Sorted(maps.Keys(sent)) {
			if m := sent[tag]; m.chat == chat {
				fmt.Fprintf(&b, "sent %s %s as message %d (voice %v)\n", m.at.UTC().Format(time.RFC3339Nano), tag, m.id, m.voice)
			}
		}
		for _, m := range tg.Messages(chat) {
			fmt.Fprintf(&b, "bot %s message %d (reply to %d): %q\n", m.Date.UTC().Format(time.RFC3339Nano), m.ID, m.ReplyTo, m.Visible)
		}
		write(fmt.Sprintf("chat-%d.txt", chat), []byte(b.String()))
	}
	t.Logf("evidence kept in %s (run with -artifacts to keep it)", dir)
}

// waitOutcome waits, as a user would, until the chat shows an outcome of
// the message newer than before (an answer, an error, a refusal, one more
// report), or patience runs out, or the load is over; it returns the
// outcome then.
func waitOutcome(tg *telegramtest.Server, tag string, m sentMessage, proxy *faultProxy, before outcome) outcome {
	deadline := time.Now().Add(patience)
	for {
		o := outcomeOf(tg.Messages(m.chat), tag, m)
		if o.answers > 0 || o.failed || o.refused || o.reports > before.reports ||
			time.Now().After(deadline) || proxy.quiet() {
			return o
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// buildBot builds cmd/telegram-bot into the test's temporary directory.
func buildBot(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "telegram-bot")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/telegram-bot")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/telegram-bot: %v\n%s", err, out)
	}
	return bin
}

// plantedSecret is a fresh GitHub-token-shaped value for the bot's env.
func plantedSecret(t *testing.T) string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "ghp_" + hex.EncodeToString(b)
}

// botEnv is the bot's whole environment: nothing of the test's own but
// PATH, plus a planted secret that must reach no channel.
func botEnv(tg *telegramtest.Server, tgURL, oaURL, agentDir, ws string, users []int64, secret string) []string {
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = strconv.FormatInt(u, 10)
	}
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + ws,
		"TELEGRAM_BOT_TOKEN=" + tg.Token(),
		"TELEGRAM_ALLOWED_USER_IDS=" + strings.Join(ids, ","),
		"TELEGRAM_API_URL=" + tgURL,
		"OPENAI_API_KEY=sk-chaos-0123456789abcdef",
		"OPENAI_BASE_URL=" + oaURL,
		"AGENT_DIR=" + agentDir,
		// Started as root (as CI runs), the bot stays root as it did: these
		// tests are not about the agent's uid (cmd/telegram-bot's
		// agent_user_test.go is).
		"AGENT_ALLOW_ROOT=1",
		"WORKSPACE_DIR=" + ws,
		"PROCESS_ENV_HARDEN_HOST_PROCESS=false",
		"APPROVAL_MODE=off",
		"LOG_LEVEL=debug",
		"GITHUB_TOKEN=" + secret,
	}
}

// summaryPrompt opens the system prompt of the bot's compaction request.
const summaryPrompt = "You write the memory of an AI agent"

// fakeSummary is the compaction summary: long enough (with the chunk delay)
// to stream for a few hundred milliseconds, so a kill can land in it, and
// free of tags, so it is never taken for a message.
var fakeSummary = "Earlier in this conversation the user sent a series of requests, one at a time; " +
	strings.Repeat("each was handled, some with a shell command, and answered in turn. ", 8)

// model is the fake model's behaviour: the answers, the faults, the
// compaction summaries and the transcripts, with realistic token usage.
type model struct {
	rng    *lockedRand
	proxy  *faultProxy
	secret string
	// compacting gets a value (when none waits) for each summary request.
	compacting                  chan struct{}
	compactions, transcriptions atomic.Int64
	// firstPrompt and peakPrompt are the prompt tokens reported for the
	// first request and the largest.
	firstPrompt, peakPrompt atomic.Int64
	secretSeen              atomic.Bool
}

func newModel(rng *lockedRand, proxy *faultProxy, secret string) *model {
	return &model{rng: rng, proxy: proxy, secret: secret, compacting: make(chan struct{}, 1)}
}

// promptTokens estimates a request's prompt tokens as a provider would
// count them: about four bytes of text a token, a few per message, and the
// tools' specs.
func promptTokens(req openaitest.ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += 4 + len(m.Text())/4
		for _, tc := range m.ToolCalls {
			n += 8 + len(tc.Arguments)/4
		}
	}
	for _, tool := range req.Tools {
		n += (len(tool.Name) + len(tool.Description) + len(tool.Parameters)) / 4
	}
	return n
}

// respond answers a user message with a bash tool call (real bash, which
// also tries to read the planted secret) or with text, and the tool's
// result with the answer naming the message's tag; a compaction request
// with a summary. While the proxy is not quiet, a share of the answers
// fail: 429, 5xx, a stream cut, a malformed chunk, a reset.
func (md *model) respond(req openaitest.ChatRequest) openaitest.Response {
	for _, m := range req.Messages {
		if strings.Contains(m.Text(), md.secret) || slices.ContainsFunc(m.ToolCalls, func(tc openaitest.ToolCall) bool { return strings.Contains(tc.Arguments, md.secret) }) {
			md.secretSeen.Store(true)
		}
	}
	prompt := promptTokens(req)
	md.firstPrompt.CompareAndSwap(0, int64(prompt))
	for peak := md.peakPrompt.Load(); int64(prompt) > peak && !md.peakPrompt.CompareAndSwap(peak, int64(prompt)); peak = md.peakPrompt.Load() {
	}
	usage := func(r openaitest.Response, text string) openaitest.Response {
		return r.WithUsage(prompt, 1+len(text)/4)
	}
	if len(req.Messages) > 0 && req.Messages[0].Role == "system" && strings.HasPrefix(req.Messages[0].Text(), summaryPrompt) {
		md.compactions.Add(1)
		select {
		case md.compacting <- struct{}{}:
		default:
		}
		if !md.proxy.quiet() && md.rng.intN(10) == 0 {
			return openaitest.StatusError(503, "overloaded")
		}
		return usage(openaitest.Text(fakeSummary), fakeSummary)
	}
	tag := ""
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == "user" {
			if tag = tagPattern.FindString(m.Text()); tag != "" {
				break
			}
		}
	}
	if tag == "" {
		return usage(openaitest.Text("nothing to do"), "nothing to do")
	}
	if !md.proxy.quiet() {
		switch md.rng.intN(14) {
		case 0:
			return openaitest.RateLimited("1")
		case 1:
			return openaitest.StatusError(503, "overloaded")
		case 2:
			return openaitest.Text("answer "+tag+" cut").Fail(openaitest.FailAbort, 1)
		case 3:
			return openaitest.Text("answer "+tag+" malformed").Fail(openaitest.FailInvalidJSON, 1)
		case 4:
			return openaitest.Text("answer "+tag).Fail(openaitest.FailReset, 0)
		}
	}
	if req.LastMessage().Role == "tool" {
		text := "answer " + tag + " done"
		return usage(openaitest.Text(text), text)
	}
	if md.rng.intN(2) == 0 {
		args, _ := json.Marshal(map[string]string{"command": "echo tok-" + tag + "; echo \"${GITHUB_TOKEN:-unset}\" | wc -c; sleep 0.$((RANDOM % 5))"})
		return usage(openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: string(args)}), string(args))
	}
	text := "answer " + tag + " direct"
	return usage(openaitest.Text(text), text)
}

// transcribe answers a voice note with the words its audio carries
// ("please handle" and its tag); while the proxy is not quiet, one in ten
// fails.
func (md *model) transcribe(req openaitest.TranscriptionRequest) openaitest.Transcript {
	md.transcriptions.Add(1)
	if !md.proxy.quiet() && md.rng.intN(10) == 0 {
		return openaitest.Transcript{Error: &openaitest.HTTPError{Status: 500, Message: "transcription failed", Type: "server_error"}}
	}
	tag := tagPattern.FindString(string(req.File))
	if tag == "" {
		return openaitest.Transcript{Text: ""}
	}
	return openaitest.Transcript{Text: "please handle " + tag}
}

// faultProxy stands between the bot and the fake Bot API: slow answers,
// connections reset before the request reaches the server, getUpdates
// held (hanging), and an update delivered twice.
type faultProxy struct {
	url   string
	rng   *lockedRand
	mu    sync.Mutex
	calm  bool
	dupe  bool
	proxy *httputil.ReverseProxy
}

func newFaultProxy(t *testing.T, target string, rng *lockedRand) *faultProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{rng: rng, proxy: httputil.NewSingleHostReverseProxy(u)}
	p.proxy.ModifyResponse = p.duplicate
	// A canceled long poll (a kill, a client timeout) is expected here.
	p.proxy.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *faultProxy) quiet() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calm
}

func (p *faultProxy) setQuiet() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calm = true
}

func (p *faultProxy) duplicateNext() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dupe = true
}

func (p *faultProxy) serve(w http.ResponseWriter, r *http.Request) {
	if !p.quiet() {
		getUpdates := strings.HasSuffix(strings.ToLower(r.URL.Path), "/getupdates")
		switch n := p.rng.intN(40); {
		case getUpdates && n < 3:
			// getUpdates hanging. The body is read first, so that the
			// server notices a client gone (a killed bot) and ends the
			// request's context: a dead bot's poll must not reach the
			// fake after the restart, a second long poll at once, which
			// real Telegram would answer with 409.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			select {
			case <-time.After(p.rng.dur(8 * time.Second)):
			case <-r.Context().Done():
				return
			}
		case !getUpdates && n == 0:
			// A reset before the request reached Telegram: the bot's
			// retry must not send anything twice.
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					if tc, ok := conn.(*net.TCPConn); ok {
						_ = tc.SetLinger(0)
					}
					conn.Close()
					return
				}
			}
		case n < 4:
			time.Sleep(p.rng.dur(700 * time.Millisecond)) // a slow answer
		}
	}
	p.proxy.ServeHTTP(w, r)
}

// duplicate repeats the first update of a getUpdates answer when asked to:
// Telegram delivering an update twice.
func (p *faultProxy) duplicate(resp *http.Response) error {
	if !strings.HasSuffix(strings.ToLower(resp.Request.URL.Path), "/getupdates") {
		return nil
	}
	p.mu.Lock()
	dupe := p.dupe
	p.mu.Unlock()
	if !dupe {
		return nil
	}
	body, err := readAll(resp)
	if err != nil {
		return err
	}
	var v struct {
		OK     bool              `json:"ok"`
		Result []json.RawMessage `json:"result"`
	}
	if json.Unmarshal(body, &v) == nil && v.OK && len(v.Result) > 0 {
		v.Result = append(v.Result, v.Result[0])
		if b, err := json.Marshal(v); err == nil {
			body = b
			p.mu.Lock()
			p.dupe = false
			p.mu.Unlock()
		}
	}
	resp.Body = readCloser{bytes.NewReader(body)}
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(resp.Body)
	return b.Bytes(), err
}

// checkFiles parses the agent dir's state after a crash: every JSON file
// whole (they are replaced atomically), every JSONL log line by line, of
// which only the last may be torn (an append cut by the kill, which the
// log's reader drops).
func checkFiles(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".json"):
			if !json.Valid(data) {
				t.Errorf("%s does not parse after a crash", path)
			}
		case strings.HasSuffix(path, ".jsonl"):
			lines := bytes.Split(data, []byte("\n"))
			for i, line := range lines {
				if len(line) == 0 {
					continue
				}
				torn := i == len(lines)-1 // no newline after it
				if !json.Valid(line) && !torn {
					t.Errorf("%s line %d does not parse after a crash", path, i+1)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("walking %s: %v", dir, err)
	}
}

// checkNoSecret looks for the planted secret in every channel: what
// Telegram and the model received, the bot's log and the agent dir.
func checkNoSecret(t *testing.T, secret string, tg *telegramtest.Server, oa *openaitest.Server, sup *supervisor, agentDir string) {
	t.Helper()
	for _, b := range tg.AllBodies() {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the planted secret (%d bytes) reached Telegram", len(secret))
			break
		}
	}
	for _, b := range oa.AllBodies() {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the planted secret (%d bytes) reached the model", len(secret))
			break
		}
	}
	if strings.Contains(sup.log(), secret) {
		t.Errorf("the planted secret (%d bytes) is in the bot's log", len(secret))
	}
	_ = filepath.WalkDir(agentDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, []byte(secret)) {
				t.Errorf("the planted secret (%d bytes) is in %s", len(secret), filepath.Base(path))
			}
		}
		return nil
	})
}
