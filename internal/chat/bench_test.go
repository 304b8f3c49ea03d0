package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// memAPI is an in-memory Bot API behind an http.RoundTripper: it answers
// at once and signals every sendMessage's text, so a benchmark measures
// the host (the Bot API client's encoding included) and not the network.
type memAPI struct {
	nextID atomic.Int64
	sent   chan string
}

// client returns an HTTP client whose requests memAPI answers.
func (m *memAPI) client() *http.Client { return &http.Client{Transport: m} }

// RoundTrip answers one Bot API call.
func (m *memAPI) RoundTrip(r *http.Request) (*http.Response, error) {
	var params struct {
		Text      string `json:"text"`
		MessageID int    `json:"message_id"`
	}
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&params)
		r.Body.Close()
	}
	var result any = true
	switch path.Base(r.URL.Path) {
	case "sendMessage":
		m.sent <- params.Text
		result = map[string]any{"message_id": m.nextID.Add(1), "date": 0, "chat": map[string]any{"id": 1, "type": "private"}}
	case "editMessageText":
		result = map[string]any{"message_id": params.MessageID, "date": 0, "chat": map[string]any{"id": 1, "type": "private"}}
	case "getMe":
		result = map[string]any{"id": 1, "is_bot": true, "first_name": "bench", "username": "bench_bot"}
	case "getFile":
		result = map[string]any{"file_id": "f", "file_unique_id": "u"}
	}
	body, err := json.Marshal(map[string]any{"ok": true, "result": result})
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
}

// BenchmarkTurn measures the host's overhead per turn: an update accepted
// (journaled with fsync, access checked, queued) to the final answer handed
// to the Bot API, with the faux provider answering at once and no tool.
// The session's transcript and the journal are written (and fsync'd) to
// disk as in production. It reports
// p50 and p99 in microseconds.
func BenchmarkTurn(b *testing.B) {
	b.Run("disk", func(b *testing.B) { benchmarkTurn(b, b.TempDir()) })
	// The same on tmpfs, where an fsync costs nothing: the host's own work.
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		b.Run("tmpfs", func(b *testing.B) {
			dir, err := os.MkdirTemp("/dev/shm", "chat-bench-")
			if err != nil {
				b.Skip(err)
			}
			defer os.RemoveAll(dir)
			benchmarkTurn(b, dir)
		})
	}
}

func benchmarkTurn(b *testing.B, dir string) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("pong")
		return agent.Response{Text: "pong"}, nil
	})
	secrets := []string{"4242424242:bench-secret-token"}
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	policy, err := spawnpolicy.New(popts, nil, func() map[string]string { return nil })
	if err != nil {
		b.Fatal(err)
	}
	red := redactor.New(secrets)
	ag, err := agent.New(faux, policy, red, agent.WithSessionDir(filepath.Join(dir, "sessions")), agent.WithWorkspace(dir))
	if err != nil {
		b.Fatal(err)
	}
	if err := ag.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer ag.Close()
	mem := &memAPI{sent: make(chan string, 16)}
	h, err := New(Config{Token: secrets[0], AllowedUserIDs: []int64{userID}, Agent: ag, Redactor: red, AgentDir: dir, WorkspaceDir: dir},
		withHTTPClient(mem.client()))
	if err != nil {
		b.Fatal(err)
	}
	defer h.journal.Close()
	ctx := context.Background()
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		// A chat of its own per turn: the faux provider's recording deep-copies
		// every request, which would grow with one ever longer session.
		chatID := int64(100000 + i)
		raw, _ := json.Marshal(map[string]any{
			"update_id": i + 1,
			"message":   map[string]any{"message_id": i + 1, "date": 0, "chat": map[string]any{"id": chatID, "type": "private"}, "from": map[string]any{"id": userID, "first_name": "u"}, "text": fmt.Sprintf("ping %d", i)},
		})
		start := time.Now()
		h.take(ctx, []json.RawMessage{raw})
		if got := <-mem.sent; got != "pong" {
			b.Fatalf("answer %q", got)
		}
		durations = append(durations, time.Since(start))
		// Let the worker mark the entry done before the next turn.
		for w := h.existingWorker(target{chatID: chatID}); w != nil && w.busy(); {
			time.Sleep(10 * time.Microsecond)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[int(float64(len(durations)-1)*p)].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	h.shutdown()
}
