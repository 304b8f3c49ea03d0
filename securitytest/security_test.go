package securitytest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// Bounds of one run.
const (
	// startTimeout is how long the bot has to start polling.
	startTimeout = 60 * time.Second
	// runTimeout is how long every vector together has to finish.
	runTimeout = 150 * time.Second
	// firstChatID is the chat (and user) id of the first vector; each
	// vector has a private chat of its own.
	firstChatID = 880001
)

// Channels searched for secrets.
const (
	chanModel    = "model"
	chanTelegram = "telegram"
	chanAgentDir = "agent-dir"
	chanLog      = "bot-log"
	// chanExercise is not a channel: its row says whether the vector did
	// what it was meant to (its expectations and the control).
	chanExercise = "exercise"
)

// Outcomes of one row of the table.
const (
	outcomePass = "PASS"
	outcomeLeak = "LEAK"
	outcomeFail = "FAIL"
	outcomeSkip = "SKIP"
)

// Legitimate exclusions. They are the only places a secret may travel, and
// the suite asserts each one instead of merely skipping it:
//   - the OPENAI_API_KEY in the Authorization header of chat completion
//     requests to the model provider: headers are not a channel the model
//     sees, so request bodies are searched and headers are not, except that
//     every other header is searched;
//   - the TELEGRAM_SPEECH_API_KEY in the Authorization header of
//     transcription requests, for the same reason;
//   - the bot token in the URL path of Bot API requests: the Bot API puts
//     it there (telegramtest never searches the path); the body, decoded
//     parameters, query and uploads are searched.
const authorizationHeader = "Authorization"

// vectorState is what the fake model saw of one vector.
type vectorState struct {
	calls       int // first requests answered with the vector's tool call
	results     int // follow-ups after the tool result, answered "done"
	wakeups     int // later turns without the vector's prompt (a watcher)
	missingTool bool
}

// suite is one run: the secrets, the vectors and what the fake model saw.
type suite struct {
	set   secretSet
	paths vectorPaths
	// printable redacts every fake value, the control included, from text
	// the suite prints.
	printable *redactor.Redactor
	vectors   []vector
	chatID    map[string]int64

	mu    sync.Mutex
	state map[string]*vectorState
}

// newSuite assigns each vector its chat.
func newSuite(set secretSet, paths vectorPaths, vs []vector) *suite {
	s := &suite{
		set: set, paths: paths, vectors: vs,
		printable: redactor.New(values(set.searched())),
		chatID:    map[string]int64{}, state: map[string]*vectorState{},
	}
	for i, v := range vs {
		s.chatID[v.name] = int64(firstChatID + i)
		s.state[v.name] = &vectorState{}
	}
	return s
}

// printableRun is the longest run of a secret's characters that text the
// suite prints may keep.
const printableRun = 7

// safe returns text fit to print: every fake value (the control included)
// and its derived forms redacted, and then any run of more than
// printableRun characters of a value masked, so that not even a fragment
// is printed.
func (s *suite) safe(text string) string {
	text = s.printable.Redact(text)
	for _, value := range values(s.set.searched()) {
		for i := 0; i+printableRun+1 <= len(value); i++ {
			text = strings.ReplaceAll(text, value[i:i+printableRun+1], "[PARTIAL]")
		}
	}
	return text
}

// vectorOf returns the vector whose marker the conversation carries.
func (s *suite) vectorOf(req openaitest.ChatRequest) (vector, bool) {
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		text := m.Text()
		i := strings.Index(text, "[[vector:")
		if i < 0 {
			continue
		}
		rest := text[i+len("[[vector:"):]
		j := strings.Index(rest, "]]")
		if j < 0 {
			continue
		}
		for _, v := range s.vectors {
			if v.name == rest[:j] {
				return v, true
			}
		}
	}
	return vector{}, false
}

// respond is the fake model: the first request of a vector's turn gets the
// vector's tool call, every other request a plain "done".
func (s *suite) respond(req openaitest.ChatRequest) openaitest.Response {
	v, ok := s.vectorOf(req)
	if !ok {
		return openaitest.Text("done")
	}
	last := req.LastMessage()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[v.name]
	switch {
	case last.Role == "user" && strings.Contains(last.Text(), v.marker()) && v.providerEcho:
		st.calls++
		return openaitest.Error(openaitest.HTTPError{
			Status: 400, Type: "invalid_request_error",
			Message: "Incorrect API key provided: " + s.set.byName(envOpenAIKey).value + " (forwarded for bot " + s.set.byName(envBotToken).value + ")",
		})
	case last.Role == "user" && strings.Contains(last.Text(), v.marker()):
		if !slices.ContainsFunc(req.Tools, func(t openaitest.Tool) bool { return t.Name == v.tool }) {
			st.missingTool = true
			return openaitest.Text("done")
		}
		st.calls++
		return openaitest.ToolCalls(openaitest.ToolCall{Name: v.tool, Arguments: v.args(s.paths)})
	case last.Role == "tool" || imagesAfterTool(req):
		st.results++
		if v.echoResult {
			return openaitest.Text("done:\n```\n" + last.Text() + "\n```")
		}
	default:
		st.wakeups++
	}
	return openaitest.Text("done")
}

// imagesAfterTool reports whether req ends with the user message that
// carries the images of the tool results before it (the provider adapter
// sends images there, since most servers refuse them in tool messages).
func imagesAfterTool(req openaitest.ChatRequest) bool {
	n := len(req.Messages)
	return n >= 2 && req.Messages[n-1].Role == "user" && req.Messages[n-2].Role == "tool"
}

// snapshot returns a copy of a vector's state.
func (s *suite) snapshot(name string) vectorState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.state[name]
}

// complete reports whether a vector has run to its end.
func (s *suite) complete(v vector, tg *telegramtest.Server) bool {
	st := s.snapshot(v.name)
	switch {
	case v.command != "" || v.speechEcho:
		return len(tg.Messages(s.chatID[v.name])) > 0
	case v.providerEcho:
		return st.calls >= 1 && len(tg.Messages(s.chatID[v.name])) > 0
	}
	if st.missingTool {
		return true
	}
	if st.results < 1 {
		return false
	}
	msgs := tg.Messages(s.chatID[v.name])
	var done []int
	for i, m := range msgs {
		if strings.Contains(m.Visible, "done") {
			done = append(done, i)
		}
	}
	switch v.wake {
	case wakeTurn:
		return st.wakeups >= 1 && len(done) >= 2
	case wakeMessage:
		return len(done) >= 1 && len(msgs) > done[0]+1
	case wakeNone:
		return len(done) >= 1
	}
	return false
}

// row is one line of the table.
type row struct {
	vector, channel, outcome string
	details                  []string
}

// TestSecurity runs every attack vector against the built bot, running as
// an unprivileged user with hardening in force, and searches every channel
// for every secret in every derived form.
func TestSecurity(t *testing.T) {
	started := time.Now()
	all := vectors()
	rows := runSuite(t, all, nil)
	passed, failed, skippedRows := 0, 0, 0
	for _, r := range rows {
		switch r.outcome {
		case outcomePass:
			passed++
		case outcomeSkip:
			skippedRows++
		default:
			failed++
		}
	}
	t.Logf("vectors: %d (%s)", len(all), familyCounts(all))
	t.Logf("results:\n%s", formatTable(rows))
	t.Logf("%d passed, %d failed (%d skipped) in %s", passed, failed, skippedRows, time.Since(started).Round(time.Second))

	for _, r := range rows {
		t.Run(r.vector+"/"+r.channel, func(t *testing.T) {
			switch r.outcome {
			case outcomeSkip:
				t.Skip(strings.Join(r.details, "; "))
			case outcomeLeak:
				t.Errorf("LEAK: %s", strings.Join(r.details, "; "))
			case outcomeFail:
				t.Errorf("FAIL: %s", strings.Join(r.details, "; "))
			}
		})
	}
}

// TestSecurityDetectsUnhardenedBot checks that the suite has teeth: with the
// host hardening turned off (PROCESS_ENV_HARDEN_HOST_PROCESS=false) and the
// agent sandbox off (AGENT_SANDBOX=off, which would refuse the reads on its
// own: TestSecuritySandboxWithoutHardening), the /proc vectors must read
// the bot's environment, and the suite must fail the vectors' exercise
// rows. Every secret value in that environment is one the redactor knows
// (a deny-listed DB_PASSWORD too), so the model sees each one redacted and
// no model row may report a leak: the exercise row, which wants the bot's
// /proc entry refused, is what tells the unhardened bot.
func TestSecurityDetectsUnhardenedBot(t *testing.T) {
	var probes []vector
	for _, v := range vectors() {
		if v.name == "proc-ppid-environ" || v.name == "proc-walk-to-bot" {
			probes = append(probes, v)
		}
	}
	if len(probes) != 2 {
		t.Fatalf("found %d of the 2 /proc vectors", len(probes))
	}
	rows := runSuite(t, probes, []string{"PROCESS_ENV_HARDEN_HOST_PROCESS=false", "AGENT_SANDBOX=off"})
	for _, v := range probes {
		t.Run(v.name, func(t *testing.T) {
			var exerciseFailed bool
			for _, r := range rows {
				if r.vector != v.name {
					continue
				}
				if r.channel == chanModel && r.outcome == outcomeLeak {
					t.Errorf("with hardening off, a secret of the bot's environment reached the model unredacted: %s", strings.Join(r.details, "; "))
				}
				if r.channel == chanExercise && r.outcome == outcomeFail {
					exerciseFailed = true
				}
			}
			if !exerciseFailed {
				t.Errorf("with hardening off, the exercise row did not fail")
			}
		})
	}
}

// runSuite builds the bot, runs vs against it (each in a chat of its own,
// all at once) with extraEnv added to the bot's environment, and returns
// the table's rows: per vector one per channel and the exercise row, then
// the rows that search each channel whole and check the exclusions.
func runSuite(t *testing.T, vs []vector, extraEnv []string) []row {
	t.Helper()
	set, l := newBotLayout(t)
	l.writeSecretFiles(t, set)
	l.writeSecretImages(t, set)
	l.writeHomeCredentials(t, set)
	l.writeSecretArchives(t, set)
	l.writeMCPConfig(t)

	var runnable, skipped []vector
	for _, v := range vs {
		if missing := missingExecutables(v.needs); len(missing) > 0 {
			t.Logf("vector %s skipped: %s not on the bot's PATH", v.name, strings.Join(missing, ", "))
			skipped = append(skipped, v)
			continue
		}
		runnable = append(runnable, v)
	}
	s := newSuite(set, vectorPaths{secrets: l.secretsDir, agentDir: l.agentDir, home: l.home, workspace: l.workspace}, runnable)

	tg := telegramtest.New(t, telegramtest.WithToken(set.byName(envBotToken).value), telegramtest.WithWaitTimeout(startTimeout))
	ai := openaitest.New(t, openaitest.AllowUnscripted(), openaitest.WithResponder(s.respond))
	var ids []int64
	for _, v := range runnable {
		ids = append(ids, s.chatID[v.name])
	}
	b := startBot(t, l, append(botEnv(l, set, tg.URL(), ai.URL(), ids), extraEnv...))

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	polling := waitUntil(ctx, 100*time.Millisecond, func() bool {
		return b.exited() || len(tg.RequestsFor("getUpdates")) > 0
	})
	if !polling || b.exited() {
		t.Fatalf("the bot did not start polling (exited: %v); its log, redacted:\n%s", b.exited(), s.safe(lastLines(b.log.String(), 40)))
	}
	if !waitMCP(b, 1) {
		t.Fatalf("the bot's MCP server had no first try; its log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
	}

	runCtx, runCancel := context.WithTimeout(context.Background(), runTimeout)
	defer runCancel()
	// Transcripts are answered in order of arrival, whatever the chat, so
	// voice notes go one at a time, while everything else runs at once.
	var voices []vector
	for _, v := range runnable {
		chat := s.chatID[v.name]
		switch {
		case v.voice:
			voices = append(voices, v)
		case v.command != "":
			tg.SendText(chat, chat, v.command)
		case v.attachment == "photo":
			tg.SendPhoto(chat, chat, tinyPNG(t), v.prompt())
		case v.attachment == "document":
			tg.SendDocument(chat, chat, "report.txt", []byte("quarterly numbers\n"), v.prompt())
		default:
			tg.SendText(chat, chat, v.prompt())
		}
	}
	for _, v := range voices {
		chat := s.chatID[v.name]
		if v.speechEcho {
			ai.EnqueueTranscripts(openaitest.Transcript{Error: &openaitest.HTTPError{
				Status: 401, Type: "invalid_request_error",
				Message: "Incorrect API key provided: " + set.byName(envSpeechKey).value,
			}})
		} else {
			ai.EnqueueTranscripts(openaitest.Transcript{Text: v.prompt()})
		}
		tg.SendVoice(chat, chat, []byte("OggS fake voice note"))
		waitUntil(runCtx, 100*time.Millisecond, func() bool { return b.exited() || s.complete(v, tg) })
	}
	waitUntil(runCtx, 250*time.Millisecond, func() bool {
		if b.exited() {
			return true
		}
		for _, v := range runnable {
			if !s.complete(v, tg) {
				return false
			}
		}
		return true
	})
	if b.exited() {
		t.Errorf("the bot exited during the run; its log, redacted:\n%s", s.safe(lastLines(b.log.String(), 40)))
	}
	// Let the last edits land, then stop the bot so that every file and
	// log line is flushed before they are searched.
	time.Sleep(500 * time.Millisecond)
	b.stop(t)

	obs := observe(t, l, ai, tg, b)
	var rows []row
	for _, v := range skipped {
		rows = append(rows, row{vector: v.name, channel: "-", outcome: outcomeSkip, details: []string{"needs " + strings.Join(v.needs, ", ")}})
	}
	for _, v := range runnable {
		rows = append(rows, s.evaluate(v, tg, obs)...)
	}
	return append(rows, s.evaluateGlobal(obs)...)
}

// tinyPNG returns a valid 2x2 PNG image.
func tinyPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatalf("encoding a PNG: %v", err)
	}
	return buf.Bytes()
}

// values returns the secrets' values.
func values(secrets []secret) []string {
	out := make([]string, len(secrets))
	for i, s := range secrets {
		out[i] = s.value
	}
	return out
}

// missingExecutables returns the names not found in any directory of the
// bot's PATH.
func missingExecutables(names []string) []string {
	var missing []string
	for _, name := range names {
		found := false
		for dir := range strings.SplitSeq(botPath, ":") {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing
}

// observation is everything the channels hold once the bot has stopped.
type observation struct {
	model       []openaitest.Request
	telegram    []telegramtest.Request
	files       []piece // every file under the agent dir
	logLines    []string
	openaiBody  []piece
	telegramAll []piece
}

// observe collects the channels' content and checks the legitimate
// exclusions (the API keys in Authorization headers).
func observe(t *testing.T, l *layout, ai *openaitest.Server, tg *telegramtest.Server, b *bot) observation {
	t.Helper()
	o := observation{model: ai.Requests(), telegram: tg.Requests()}
	_ = filepath.WalkDir(l.agentDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Errorf("reading %s: %v", path, rerr)
			return nil
		}
		rel, _ := filepath.Rel(l.agentDir, path)
		o.files = append(o.files, piece{where: "file " + rel, text: string(data)})
		return nil
	})
	o.logLines = strings.Split(b.log.String(), "\n")
	for i, r := range o.model {
		o.openaiBody = append(o.openaiBody, piece{where: fmt.Sprintf("request %d %s body", i, r.Path), text: string(r.Body)})
	}
	for _, r := range o.telegram {
		o.telegramAll = append(o.telegramAll, telegramPieces(r)...)
	}
	return o
}

// telegramPieces returns what the bot put in one Bot API request: body,
// decoded parameters, query and uploads; never the URL path, which carries
// the bot token by design.
func telegramPieces(r telegramtest.Request) []piece {
	where := fmt.Sprintf("%s #%d", r.Method, r.Seq)
	out := []piece{{where: where + " body", text: string(r.Body)}, {where: where + " query", text: r.Query}}
	for k, v := range r.Params {
		out = append(out, piece{where: where + " param " + k, text: v})
	}
	for k, f := range r.Files {
		out = append(out, piece{where: where + " upload " + k, text: f.Filename + "\n" + string(f.Content)})
	}
	return out
}

// evaluate returns the rows of one vector: one per channel, and the
// exercise row.
func (s *suite) evaluate(v vector, tg *telegramtest.Server, o observation) []row {
	st := s.snapshot(v.name)
	if st.missingTool {
		return []row{{vector: v.name, channel: "-", outcome: outcomeSkip, details: []string{"the bot does not offer the tool " + v.tool}}}
	}
	chat := s.chatID[v.name]
	chatText := strconv.FormatInt(chat, 10)

	var model []piece
	// seen is what the model was shown of the vector's doing: its tool
	// results and the prompts of later turns (a watcher's output).
	var seen strings.Builder
	// descriptions and schemas are how the vector's tool was offered.
	var descriptions, schemas strings.Builder
	for i, r := range o.model {
		if r.Chat == nil {
			continue
		}
		if vv, ok := s.vectorOf(*r.Chat); !ok || vv.name != v.name {
			continue
		}
		model = append(model, piece{where: fmt.Sprintf("request %d body", i), text: string(r.Body)})
		for _, tool := range r.Chat.Tools {
			if tool.Name == v.tool {
				descriptions.WriteString(tool.Description + "\n")
				schemas.WriteString(string(tool.Parameters) + "\n")
			}
		}
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" || (m.Role == "user" && !strings.Contains(m.Text(), v.marker())) {
				seen.WriteString(m.Text() + "\n")
			}
		}
	}
	var telegram []piece
	for _, r := range o.telegram {
		if r.Params["chat_id"] == chatText {
			telegram = append(telegram, telegramPieces(r)...)
		}
	}
	var files []piece
	for _, f := range o.files {
		if strings.Contains(f.where, chatText) {
			files = append(files, f)
		}
	}
	var logs []piece
	for i, line := range o.logLines {
		if strings.Contains(line, chatText) {
			logs = append(logs, piece{where: fmt.Sprintf("log line %d", i+1), text: line})
		}
	}

	rows := []row{
		leakRow(v.name, chanModel, s.set.searched(), model),
		leakRow(v.name, chanTelegram, s.set.searched(), telegram),
		leakRow(v.name, chanAgentDir, s.set.searched(), files),
		leakRow(v.name, chanLog, s.set.searched(), logs),
	}

	ex := row{vector: v.name, channel: chanExercise, outcome: outcomePass}
	if !s.complete(v, tg) {
		ex.details = append(ex.details, fmt.Sprintf("did not finish (tool calls %d, results %d, wake-ups %d)", st.calls, st.results, st.wakeups))
	}
	if len(model) == 0 && v.command == "" && !v.speechEcho {
		ex.details = append(ex.details, "the model received no request for it")
	}
	results := seen.String()
	for _, e := range v.expect {
		if !e.in(s.set, results) {
			ex.details = append(ex.details, fmt.Sprintf("missing %s; what the model saw begins %q", e.what, s.safe(truncate(results, 300))))
		}
	}
	var shown strings.Builder
	for _, m := range tg.Messages(chat) {
		shown.WriteString(m.Visible + "\n")
	}
	for _, e := range v.expectChat {
		if !e.in(s.set, shown.String()) {
			ex.details = append(ex.details, fmt.Sprintf("missing %s in the chat; it begins %q", e.what, s.safe(truncate(shown.String(), 300))))
		}
	}
	for _, e := range v.expectSpec {
		if !e.in(s.set, descriptions.String()) || !e.in(s.set, schemas.String()) {
			ex.details = append(ex.details, fmt.Sprintf("missing %s in the tool's description or schema; they begin %q, %q",
				e.what, s.safe(truncate(descriptions.String(), 200)), s.safe(truncate(schemas.String(), 200))))
		}
	}
	for _, f := range v.forbid {
		if strings.Contains(results, f) {
			ex.details = append(ex.details, fmt.Sprintf("the tool result says %q", f))
		}
	}
	if len(ex.details) > 0 {
		ex.outcome = outcomeFail
	}
	return append(rows, ex)
}

// evaluateGlobal returns the rows that search each channel whole, so that
// nothing escapes because it could not be attributed to a vector, and that
// check the legitimate exclusions.
func (s *suite) evaluateGlobal(o observation) []row {
	const all = "(all)"
	var logs []piece
	for i, line := range o.logLines {
		logs = append(logs, piece{where: fmt.Sprintf("log line %d", i+1), text: line})
	}
	rows := []row{
		leakRow(all, chanModel, s.set.searched(), o.openaiBody),
		leakRow(all, chanTelegram, s.set.searched(), o.telegramAll),
		leakRow(all, chanAgentDir, s.set.searched(), o.files),
		leakRow(all, chanLog, s.set.searched(), logs),
	}
	return append(rows, s.headerRows(o)...)
}

// headerRows checks the exclusions: every request to the model provider
// carries in its Authorization header exactly the key meant for its path
// (the OPENAI_API_KEY for chat completions, the speech key for
// transcriptions), no other header carries a secret, and every Bot API
// request names the bot token in its path only.
func (s *suite) headerRows(o observation) []row {
	openaiKey := s.set.byName(envOpenAIKey).value
	speechKey := s.set.byName(envSpeechKey).value
	hdr := row{vector: "(all)", channel: "model-headers", outcome: outcomePass}
	transcriptions := 0
	for i, r := range o.model {
		want := "Bearer " + openaiKey
		if strings.Contains(r.Path, "/audio/transcriptions") {
			want = "Bearer " + speechKey
			transcriptions++
		}
		if r.Header.Get(authorizationHeader) != want {
			hdr.details = append(hdr.details, fmt.Sprintf("request %d %s: the Authorization header is not the expected key", i, r.Path))
		}
		var other []piece
		for name, vals := range r.Header {
			if name != authorizationHeader {
				other = append(other, piece{where: fmt.Sprintf("request %d header %s", i, name), text: strings.Join(vals, "\n")})
			}
		}
		for _, f := range scan(s.set.searched(), other) {
			hdr.details = append(hdr.details, "LEAK "+f.String())
		}
	}
	if len(hdr.details) > 0 {
		hdr.outcome = outcomeFail
	}
	tgRow := row{vector: "(all)", channel: "telegram-path", outcome: outcomePass}
	token := s.set.byName(envBotToken).value
	for _, r := range o.telegram {
		if r.Token != token {
			tgRow.outcome = outcomeFail
			tgRow.details = append(tgRow.details, fmt.Sprintf("%s #%d was not made with the bot token", r.Method, r.Seq))
		}
	}
	rows := []row{hdr, tgRow}
	if transcriptions == 0 {
		rows = append(rows, row{vector: "(all)", channel: "speech-header", outcome: outcomeSkip, details: []string{"no transcription request was made"}})
	}
	return rows
}

// leakRow searches content for every secret and returns the row.
func leakRow(vectorName, channel string, secrets []secret, content []piece) row {
	r := row{vector: vectorName, channel: channel, outcome: outcomePass}
	for _, f := range scan(secrets, content) {
		r.outcome = outcomeLeak
		r.details = append(r.details, f.String())
	}
	if len(r.details) > 8 {
		n := len(r.details)
		r.details = append(r.details[:8], fmt.Sprintf("... %d findings in all", n))
	}
	return r
}

// formatTable renders rows as an aligned table.
func formatTable(rows []row) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VECTOR\tCHANNEL\tRESULT\tDETAILS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.vector, r.channel, r.outcome, strings.Join(r.details, "; "))
	}
	tw.Flush()
	return b.String()
}

// truncate returns at most n bytes of s.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// lastLines returns the last n lines of text.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
