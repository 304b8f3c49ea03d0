package mcp

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakePNG is the image the fake server's image tool returns: a 3×2 PNG
// with bytes after its end, which the agent's copy must not keep.
var fakePNG = func() []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 2))); err != nil {
		panic(err)
	}
	return append(b.Bytes(), "trailing bytes"...)
}()

// runFakeServer is the fake MCP server: the test binary run with
// fakeServerArg. Its modes: serve (the tools below, over stdio), broken
// (writes -message to stderr and exits 1) and hang (never answers). With
// -cwd-log it first appends its working directory to that file; with
// -barrier it serves only once -barrier-count servers have started; with
// -fail-count its first -fail-times starts fail as a registry error would.
func runFakeServer(args []string) int {
	fs := flag.NewFlagSet(fakeServerArg, flag.ContinueOnError)
	mode := fs.String("mode", "serve", "serve, broken or hang")
	message := fs.String("message", "", "what broken writes to stderr")
	cwdLog := fs.String("cwd-log", "", "file to append the working directory to")
	barrier := fs.String("barrier", "", "directory where the servers meet before serving")
	barrierCount := fs.Int("barrier-count", 0, "how many servers meet in -barrier")
	failCount := fs.String("fail-count", "", "file counting the starts; the first -fail-times starts fail as broken")
	failTimes := fs.Int("fail-times", 0, "how many starts fail (see -fail-count)")
	failAfter := fs.Int("fail-after", 0, "with -fail-count: every start after this many fails")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cwdLog != "" {
		wd, _ := os.Getwd()
		f, err := os.OpenFile(*cwdLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(f, wd)
		f.Close()
	}
	if *failCount != "" {
		b, _ := os.ReadFile(*failCount)
		n := len(b)
		if err := os.WriteFile(*failCount, append(b, 'x'), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if n < *failTimes || *failAfter > 0 && n >= *failAfter {
			fmt.Fprintf(os.Stderr, "npm error code E503\nnpm error fetching the package failed, start %d\n", n+1)
			return 1
		}
	}
	switch *mode {
	case "broken":
		fmt.Fprintln(os.Stderr, "fake server refusing to start:", *message)
		return 1
	case "hang":
		time.Sleep(time.Hour)
		return 0
	}
	if *barrier != "" {
		if err := meet(*barrier, *barrierCount); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Fprintln(os.Stderr, "fake server ready")
	server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "v1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	mcp.AddTool(server, &mcp.Tool{Name: "env", Description: "Prints the server's environment."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			env := os.Environ()
			slices.Sort(env)
			return text(strings.Join(env, "\n")), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "pid", Description: "Prints the server's process id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "crash", Description: "Exits in the middle of the call."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "fake server crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "stall", Description: "Never answers, whatever the client says."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			time.Sleep(time.Hour)
			return text("too late"), nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "image", Description: "Returns an image."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "an image:"},
				&mcp.ImageContent{MIMEType: "image/png", Data: fakePNG},
			}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "fail", Description: "Fails as a tool."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it went wrong"}}}, nil, nil
		})
	type echoArgs struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		return 1
	}
	return 0
}

// meet marks this server's arrival in dir and waits until count servers
// have arrived, so servers started one after the other never get past it.
func meet(dir string, count int) error {
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), nil, 0o600); err != nil {
		return err
	}
	for {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		if len(entries) >= count {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}
