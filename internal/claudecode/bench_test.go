package claudecode_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// callsPerTurn is how many bash calls the OpenAI baseline makes in one
// turn, under the agent's step limit.
const callsPerTurn = 40

// BenchmarkToolRoundTrip measures one `bash true` call, sandboxed, as the
// model's side sees it: through the bridge (claude's MCP request, the
// bridge process, the socket, the host's tool run, and back), and in the
// OpenAI provider's loop (from the request that answers with the call to
// the next request, which carries its result). ns/call is the figure; ns/op
// includes the turns around the calls.
func BenchmarkToolRoundTrip(b *testing.B) {
	b.Run("bridge", benchBridge)
	b.Run("openai", benchOpenAI)
}

func benchBridge(b *testing.B) {
	h := newHarness(b, setup{sandboxed: true})
	b.ResetTimer()
	got := h.prompt(b, context.Background(), "bench", "bench: "+strconv.Itoa(b.N))
	b.StopTimer()
	if got.err != nil {
		b.Fatalf("Prompt: %v", got.err)
	}
	data, err := os.ReadFile(filepath.Join(h.home, "bench.ns"))
	if err != nil {
		b.Fatal(err)
	}
	ns, _ := strconv.ParseFloat(string(data), 64)
	b.ReportMetric(ns/float64(b.N), "ns/call")
}

func benchOpenAI(b *testing.B) {
	srv := openaitest.New(b)
	var mu sync.Mutex
	var last time.Time
	var total time.Duration
	calls := 0
	srv.Handle(func(req openaitest.ChatRequest) openaitest.Response {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		msgs := req.Messages
		results := 0
		for _, m := range msgs {
			if m.Role == "tool" {
				results++
			}
		}
		if results > 0 {
			total += now.Sub(last)
			calls++
		}
		last = now
		if results < callsPerTurn {
			return openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: `{"command":"true"}`})
		}
		return openaitest.Text("done")
	})
	h := newHarness(b, setup{sandboxed: true})
	a, err := agent.New(openai.NewProvider(openai.Config{APIKey: "sk-bench-key-0123456789", BaseURL: srv.URL()}), h.policy,
		redactor.New([]string{hostSecret}), agent.WithWorkspace(h.workspace), agent.WithTools(tools.All(tools.WithView(h.view))...))
	if err != nil {
		b.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ResetTimer()
	for turn := 0; turn*callsPerTurn < b.N; turn++ {
		s, err := a.Session(context.Background(), agent.SessionOptions{ID: "bench-" + strconv.Itoa(turn)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	b.ReportMetric(float64(total.Nanoseconds())/float64(calls), "ns/call")
}
