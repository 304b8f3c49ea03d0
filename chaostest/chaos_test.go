package chaostest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
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
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

var (
	long     = flag.Bool("chaos.long", false, "run the soak: more chats, longer, more restarts")
	seedFlag = flag.Uint64("chaos.seed", 0, "the run's seed (0: a fresh one, printed)")
	duration = flag.Duration("chaos.duration", 20*time.Minute, "how long the long form sends messages")
)

// params size one run.
type params struct {
	chats, perChat int
	// gap is the largest pause between two messages of a chat.
	gap time.Duration
	// kills is how many times the bot is killed (every third by SIGTERM).
	kills int
	// load is how long the messages are spread over (the long form).
	load time.Duration
}

func shortParams() params {
	return params{chats: 8, perChat: 12, gap: 2 * time.Second, kills: 3}
}

func longParams() params {
	return params{chats: 24, perChat: 0, gap: 8 * time.Second, kills: 0, load: *duration}
}

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
	oa := openaitest.New(t, openaitest.WithChunkSize(4), openaitest.WithChunkDelay(2*time.Millisecond),
		openaitest.WithResponder(modelWithFaults(rng, proxy)))
	agentDir, ws := t.TempDir(), t.TempDir()
	env := botEnv(tg, proxy.url, oa.URL(), agentDir, ws, users, secret)
	sup := &supervisor{t: t, bin: bin, env: env, agentDir: agentDir}
	sup.start()
	t.Cleanup(sup.stopFinal)

	// The load: every chat sends its messages; a few chats also /stop,
	// and are left out of the exactly-once accounting (a /stop drops the
	// queued messages, as it says).
	rec := &record{sent: map[string]sentMessage{}}
	var wg sync.WaitGroup
	loadEnd := time.Now().Add(p.load)
	for ci, uid := range users {
		stopper := ci%7 == 6
		gap := rng.dur(p.gap) + p.gap/4
		wg.Go(func() {
			for n := 0; ; n++ {
				if p.perChat > 0 && n >= p.perChat || p.perChat == 0 && time.Now().After(loadEnd) {
					return
				}
				tag := fmt.Sprintf("m%d-%d", ci, n)
				switch r := rng.intN(20); {
				case r == 0:
					tg.SendText(uid, uid, "/help")
				case r == 1 && stopper:
					tg.SendText(uid, uid, "/stop")
				}
				m := tg.SendText(uid, uid, "please handle "+tag)
				rec.add(tag, sentMessage{chat: uid, id: m.ID, at: time.Now(), stopper: stopper})
				time.Sleep(rng.dur(gap))
			}
		})
	}
	// Telegram's own errors, injected while the load runs.
	faultsDone := make(chan struct{})
	go func() {
		defer close(faultsDone)
		for !proxy.quiet() {
			switch rng.intN(6) {
			case 0:
				tg.FailNext("sendMessage", 1, 429, "", 1)
			case 1:
				tg.FailNext("sendMessage", 1, 502, "Bad Gateway", 0)
			case 2:
				tg.FailNext("getUpdates", 1, 409, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running", 0)
			case 3:
				tg.FailNext("getUpdates", 1, 429, "", 2)
			case 4:
				tg.FailNext("sendMessageDraft", 2, 500, "Internal Server Error", 0)
			case 5:
				tg.FailNext("sendChatAction", 1, 429, "", 1)
			}
			time.Sleep(rng.dur(3*time.Second) + time.Second)
		}
	}()
	// Duplicated updates: Telegram sends an update it already sent.
	go func() {
		for !proxy.quiet() {
			time.Sleep(rng.dur(5*time.Second) + 2*time.Second)
			if reqs := tg.RequestsFor("getUpdates"); len(reqs) > 0 {
				proxy.duplicateNext()
			}
		}
	}()
	// The kills: at random moments, SIGKILL (every third one SIGTERM), and
	// a restart as a supervisor would; the files are checked after each.
	kills := p.kills
	if *long {
		kills = int(p.load / (45 * time.Second))
	}
	killsDone := make(chan struct{})
	go func() {
		defer close(killsDone)
		span := 40 * time.Second
		if *long {
			span = p.load
		}
		for k := range kills {
			time.Sleep(rng.dur(span/time.Duration(kills)) + 3*time.Second)
			sup.restart(k%3 == 2)
			checkFiles(t, agentDir)
		}
	}()
	wg.Wait()
	<-killsDone
	proxy.setQuiet()
	<-faultsDone

	// Settle: every accepted message is answered or reported; a reported
	// one is retried (in its own chat, once per report) until answered.
	deadline := time.Now().Add(4 * time.Minute)
	if *long {
		deadline = time.Now().Add(10 * time.Minute)
	}
	retried := map[int64]int{}
	for {
		st := rec.classify(tg)
		open := st.openChats()
		if len(open) == 0 && len(st.waitingReported) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("not settled: %d messages without an outcome: %v; %d reported but not answered after /retry", len(open), st.lostTags, len(st.waitingReported))
			break
		}
		for _, chat := range st.retryChats() {
			if reports := st.reportsIn[chat]; reports > retried[chat] {
				retried[chat] = reports
				tg.SendText(chat, chat, "/retry")
			}
		}
		time.Sleep(time.Second)
	}
	sup.stopFinal()
	checkFiles(t, agentDir)
	st := rec.classify(tg)
	for tag, n := range st.answers {
		if n > 1 {
			t.Errorf("%s answered %d times", tag, n)
		}
	}
	if len(st.lostTags) > 0 {
		t.Errorf("lost (neither answered nor reported): %v", st.lostTags)
		for _, tag := range st.lostTags {
			m := rec.sent[tag]
			for _, b := range tg.Messages(m.chat) {
				t.Logf("chat %d: message %d (reply to %d): %q", m.chat, b.ID, b.ReplyTo, b.Visible)
			}
			t.Logf("%s was message %d", tag, m.id)
			scope := strconv.FormatInt(m.chat, 10)
			for line := range strings.SplitSeq(sup.log(), "\n") {
				if strings.Contains(line, scope) || strings.Contains(line, tag) {
					t.Logf("log: %s", line)
				}
			}
		}
	}
	checkNoSecret(t, secret, tg, oa, sup, agentDir)
	peak := sup.peakRSS()
	if peak > 300*1024 {
		t.Errorf("peak VmRSS %d kB is above 300 MB", peak)
	}
	if th := sup.peakThreads(); th > 200 {
		t.Errorf("peak threads %d is above 200", th)
	}
	t.Logf("\n%s", st.table(seed, sup.restarts, peak, sup.peakThreads()))
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
		"WORKSPACE_DIR=" + ws,
		"PROCESS_ENV_HARDEN_HOST_PROCESS=false",
		"APPROVAL_MODE=off",
		"LOG_LEVEL=debug",
		"GITHUB_TOKEN=" + secret,
	}
}

// modelWithFaults answers a user message with a bash tool call (real bash,
// which also tries to read the planted secret) or with text, and the
// tool's result with the answer naming the message's tag; while the proxy
// is not quiet, a share of the answers fail: 429, 5xx, a stream cut, a
// malformed chunk, a reset.
func modelWithFaults(rng *lockedRand, proxy *faultProxy) openaitest.Responder {
	return func(req openaitest.ChatRequest) openaitest.Response {
		tag := ""
		for _, m := range slices.Backward(req.Messages) {
			if m.Role == "user" {
				if tag = tagPattern.FindString(m.Text()); tag != "" {
					break
				}
			}
		}
		if tag == "" {
			return openaitest.Text("nothing to do")
		}
		if !proxy.quiet() {
			switch rng.intN(14) {
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
			return openaitest.Text("answer " + tag + " done")
		}
		if rng.intN(2) == 0 {
			args, _ := json.Marshal(map[string]string{"command": "echo tok-" + tag + "; echo \"${GITHUB_TOKEN:-unset}\" | wc -c; sleep 0.$((RANDOM % 5))"})
			return openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: string(args)})
		}
		return openaitest.Text("answer " + tag + " direct")
	}
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
			time.Sleep(p.rng.dur(8 * time.Second)) // getUpdates hanging
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

// supervisor runs the bot, restarts it after a kill, and samples its
// memory.
type supervisor struct {
	t        *testing.T
	bin      string
	env      []string
	agentDir string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	logs     bytes.Buffer
	restarts int
	rss      int
	threads  int
	stopped  bool
}

func (s *supervisor) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "run")
	cmd.Env = s.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw, err := os.Pipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	pw.Close()
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.Write(sc.Bytes())
			s.logs.WriteByte('\n')
			s.mu.Unlock()
		}
		pr.Close()
	}()
	go func() { cmd.Wait(); close(exited) }()
	go s.sample(cmd.Process.Pid, exited)
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
}

// sample records the process's peak VmRSS and thread count every second.
func (s *supervisor) sample(pid int, exited chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return
		case <-tick.C:
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			n, _ := strconv.Atoi(f[1])
			s.mu.Lock()
			switch f[0] {
			case "VmRSS:":
				s.rss = max(s.rss, n)
			case "Threads:":
				s.threads = max(s.threads, n)
			}
			s.mu.Unlock()
		}
	}
}

// restart kills the bot (SIGTERM when graceful, else SIGKILL to its
// process group, as a crash would leave it) and starts it again.
func (s *supervisor) restart(graceful bool) {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if graceful {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			s.t.Errorf("the bot did not exit within 30s of SIGTERM")
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	} else {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	s.mu.Lock()
	s.restarts++
	s.mu.Unlock()
	s.start()
}

// stopFinal ends the run with SIGTERM; it is safe to call twice.
func (s *supervisor) stopFinal() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		s.t.Errorf("the bot did not exit within 30s of SIGTERM")
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

func (s *supervisor) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *supervisor) peakRSS() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rss
}

func (s *supervisor) peakThreads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threads
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
