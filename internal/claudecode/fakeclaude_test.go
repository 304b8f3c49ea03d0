package claudecode_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fake claude is this test binary started with claude's arguments: it
// speaks stream-json as the real CLI does, starts the bridge from
// --mcp-config as the real one does, and follows the script its prompt
// names. It records its arguments, its environment and what the bridge
// gave it in $HOME/records.jsonl, for the tests to read.

// fakeRecord is what one fake claude run saw.
type fakeRecord struct {
	Args   []string `json:"args"`
	Env    []string `json:"env"`
	Prompt string   `json:"prompt"`
	// Blocks are the prompt's content blocks: their type, and an image's
	// media type and size.
	Blocks []string `json:"blocks"`
	Result string   `json:"result,omitempty"`
}

// isFakeClaude reports whether args (os.Args) start the fake claude.
func isFakeClaude(args []string) bool {
	return len(args) > 1 && (args[1] == "-p" || args[1] == "--version" || args[1] == "auth")
}

// fakeClaude is the fake's main; it returns the exit code.
func fakeClaude(args []string) int {
	if args[0] == "--version" {
		fmt.Println("2.1.197 (Claude Code)")
		return 0
	}
	if args[0] == "auth" {
		fmt.Println(`{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty"}`)
		return 0
	}
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--input-format", "--output-format", "--mcp-config", "--tools", "--permission-mode", "--setting-sources",
			"--allowedTools", "--resume", "--session-id", "--model", "--append-system-prompt-file":
			i++
			flags[a] = args[i]
		default:
			flags[a] = "true"
		}
	}
	if _, err := os.Stat("fake-claude-old"); err == nil {
		fmt.Fprintln(os.Stderr, "error: unknown option '--include-partial-messages'")
		return 1
	}
	home := os.Getenv("HOME")
	out := json.NewEncoder(os.Stdout)
	rec := fakeRecord{Args: args, Env: os.Environ()}
	defer func() {
		f, err := os.OpenFile(filepath.Join(home, "records.jsonl"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err == nil {
			_ = json.NewEncoder(f).Encode(rec)
			f.Close()
		}
	}()

	sessions := filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "fake-sessions")
	_ = os.MkdirAll(sessions, 0o700)
	session := flags["--session-id"]
	switch {
	case flags["--resume"] != "":
		session = flags["--resume"]
		if _, err := os.Stat(filepath.Join(sessions, session)); err != nil {
			fmt.Fprintln(os.Stderr, "No conversation found with session ID: "+session)
			_ = out.Encode(map[string]any{"type": "result", "subtype": "error_during_execution", "is_error": true, "num_turns": 0})
			return 1
		}
	case session != "":
		if _, err := os.Stat(filepath.Join(sessions, session)); err == nil {
			fmt.Fprintf(os.Stderr, "Error: Session ID %s is already in use.\n", session)
			return 1
		}
	}

	line, err := bufio.NewReader(os.Stdin).ReadBytes('\n')
	if err != nil {
		return 1
	}
	var in struct {
		Message struct {
			Content []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Source struct {
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		} `json:"message"`
	}
	_ = json.Unmarshal(line, &in)
	for _, c := range in.Message.Content {
		rec.Prompt += c.Text
		block := c.Type
		if c.Type == "image" {
			data, _ := base64.StdEncoding.DecodeString(c.Source.Data)
			block += fmt.Sprintf(" %s %d", c.Source.MediaType, len(data))
		}
		rec.Blocks = append(rec.Blocks, block)
	}
	prompt := rec.Prompt

	ctx := context.Background()
	var bridge *mcp.ClientSession
	tools := []string{}
	servers := []map[string]string{}
	data, _ := os.ReadFile(flags["--mcp-config"])
	var cfg struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	_ = json.Unmarshal(data, &cfg)
	for name, s := range cfg.MCPServers {
		if strings.Contains(prompt, "nobridge") {
			servers = append(servers, map[string]string{"name": name, "status": "failed"})
			continue
		}
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "fake-claude"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			servers = append(servers, map[string]string{"name": name, "status": "failed"})
			continue
		}
		defer cs.Close()
		bridge = cs
		list, err := cs.ListTools(ctx, nil)
		if err == nil {
			for _, t := range list.Tools {
				tools = append(tools, "mcp__"+name+"__"+t.Name)
			}
		}
		servers = append(servers, map[string]string{"name": name, "status": "connected"})
	}
	if strings.Contains(prompt, "native") {
		tools = append(tools, "Bash")
	}
	keySource := "none"
	if strings.Contains(prompt, "apikey") {
		keySource = "ANTHROPIC_API_KEY"
	}
	if !strings.Contains(prompt, "noinit") {
		_ = out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": session, "tools": tools,
			"mcp_servers": servers, "apiKeySource": keySource, "claude_code_version": "2.1.197"})
	}
	if session != "" {
		f, _ := os.OpenFile(filepath.Join(sessions, session), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		fmt.Fprintln(f, prompt)
		f.Close()
	}

	delta := func(text string) {
		_ = out.Encode(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta",
			"index": 0, "delta": map[string]any{"type": "text_delta", "text": text}}})
	}
	fail := func(kind, text string) int {
		_ = out.Encode(map[string]any{"type": "assistant", "error": kind, "message": map[string]any{"content": []map[string]any{{"type": "text", "text": text}}}})
		_ = out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": true, "result": text, "num_turns": 1})
		return 1
	}
	answer := ""
	switch {
	case strings.HasPrefix(prompt, "bash: "):
		delta("Running it.")
		command := strings.TrimPrefix(prompt, "bash: ")
		_ = out.Encode(map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{
			{"type": "text", "text": "Running it."},
			{"type": "tool_use", "id": "toolu_01", "name": "mcp__host__bash", "input": map[string]any{"command": command}}}}})
		if bridge == nil {
			return fail("unknown", "no bridge")
		}
		res, err := bridge.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": command}})
		if err != nil {
			return fail("unknown", "the bridge call failed")
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				rec.Result += tc.Text
			}
		}
		answer = "The output: " + rec.Result
	case strings.HasPrefix(prompt, "bench: "):
		n, _ := strconv.Atoi(strings.TrimPrefix(prompt, "bench: "))
		if bridge == nil {
			return fail("unknown", "no bridge")
		}
		var total time.Duration
		for i := range n {
			_ = out.Encode(map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{
				{"type": "tool_use", "id": fmt.Sprintf("toolu_b%d", i), "name": "mcp__host__bash", "input": map[string]any{"command": "true"}}}}})
			start := time.Now()
			res, err := bridge.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
			total += time.Since(start)
			if err != nil {
				return fail("unknown", "the bridge call failed: "+err.Error())
			}
			if res.IsError {
				text := ""
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						text += tc.Text
					}
				}
				return fail("unknown", "the bridge call failed: "+text)
			}
		}
		_ = os.WriteFile(filepath.Join(home, "bench.ns"), []byte(strconv.FormatInt(total.Nanoseconds(), 10)), 0o600)
		answer = "done"
	case prompt == "parallel":
		_ = out.Encode(map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{
			{"type": "tool_use", "id": "toolu_read", "name": "mcp__host__read", "input": map[string]any{"path": "a.txt"}},
			{"type": "tool_use", "id": "toolu_bash", "name": "mcp__host__bash", "input": map[string]any{"command": "true"}}}}})
		if bridge == nil {
			return fail("unknown", "no bridge")
		}
		for _, c := range []struct {
			name string
			args map[string]any
		}{{"bash", map[string]any{"command": "true"}}, {"read", map[string]any{"path": "a.txt"}}} {
			if _, err := bridge.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args}); err != nil {
				return fail("unknown", "the bridge call failed")
			}
		}
		answer = "both done"
	case prompt == "notloggedin":
		return fail("authentication_failed", "Not logged in · Please run /login")
	case prompt == "limit":
		_ = out.Encode(map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{
			"status": "rejected", "resetsAt": 1893456000, "rateLimitType": "five_hour"}})
		return fail("rate_limit", "5-hour limit reached")
	case prompt == "sleep":
		child := exec.Command("sleep", "1000")
		_ = child.Start()
		_ = os.WriteFile(filepath.Join(home, "sleep.pid"), []byte(strconv.Itoa(os.Getpid())+" "+strconv.Itoa(child.Process.Pid)), 0o600)
		time.Sleep(time.Hour)
	default:
		n := 0
		if data, err := os.ReadFile(filepath.Join(sessions, session)); err == nil {
			n = strings.Count(string(data), "\n")
		}
		answer = fmt.Sprintf("turn %d: %s", n, prompt)
	}
	for _, word := range strings.SplitAfter(answer, " ") {
		delta(word)
	}
	_ = out.Encode(map[string]any{"type": "assistant", "message": map[string]any{"content": []map[string]any{{"type": "text", "text": answer}}}})
	_ = out.Encode(map[string]any{"type": "rate_limit_event", "rate_limit_info": map[string]any{
		"status": "allowed", "resetsAt": 1893456000, "rateLimitType": "five_hour", "utilization": 0.25}})
	_ = out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": answer, "num_turns": 1,
		"total_cost_usd": 0.0125, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5,
			"cache_read_input_tokens": 100, "cache_creation_input_tokens": 20}})
	return 0
}
