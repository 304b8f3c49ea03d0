package claudecode

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// maxRequestBytes bounds one request line of the bridge (a tool call's
// arguments: a write of a large file).
const maxRequestBytes = 64 << 20

// requestTimeout bounds how long a connection may take to send its request.
const requestTimeout = 10 * time.Second

// bridgeTurn is a running turn as the bridge server knows it.
type bridgeTurn struct {
	tools []agent.ToolSpec
	call  func(name string, args json.RawMessage) wireResult
}

// bridgeServer is the bot's end of the bridge: a Unix socket that serves
// the running turns' tools to the bridges that prove a turn's secret.
type bridgeServer struct {
	ln     net.Listener
	logger *slog.Logger
	wg     sync.WaitGroup

	mu    sync.Mutex
	turns map[string]*bridgeTurn
	// refusedAt is when a refusal was last logged: a process that floods
	// the socket gets one line a minute, not one each.
	refusedAt time.Time
}

// listenBridge listens on the Unix socket path (mode 0600), replacing a
// socket a previous run left there.
func listenBridge(path string, logger *slog.Logger) (*bridgeServer, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		_ = os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("claudecode: bridge socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("claudecode: bridge socket: %w", err)
	}
	s := &bridgeServer{ln: ln, logger: logger, turns: map[string]*bridgeTurn{}}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// register makes t reachable with a fresh secret until end is called.
func (s *bridgeServer) register(t *bridgeTurn) (secret string, end func()) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret = hex.EncodeToString(b[:])
	s.mu.Lock()
	s.turns[secret] = t
	s.mu.Unlock()
	return secret, func() {
		s.mu.Lock()
		delete(s.turns, secret)
		s.mu.Unlock()
	}
}

// close stops listening and waits for the connections being served.
func (s *bridgeServer) close() error {
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *bridgeServer) serve() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.logger.Error("claudecode: bridge socket", "err", err)
			}
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer conn.Close()
			s.handle(conn)
		}()
	}
}

// handle serves one connection: one request, one answer, or nothing for a
// secret that matches no running turn.
func (s *bridgeServer) handle(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(requestTimeout))
	r := bufio.NewReaderSize(conn, 64<<10)
	line, err := readLine(r, maxRequestBytes)
	if err != nil {
		return
	}
	var req wireRequest
	if err := json.Unmarshal(line, &req); err != nil {
		return
	}
	s.mu.Lock()
	t := s.turns[req.Secret]
	logRefusal := t == nil && time.Since(s.refusedAt) >= time.Minute
	if logRefusal {
		s.refusedAt = time.Now()
	}
	s.mu.Unlock()
	if t == nil || req.Secret == "" {
		if logRefusal {
			s.logger.Warn("claudecode: a bridge connection without a running turn's secret was refused (logged once a minute)")
		}
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	var answer any
	switch req.Op {
	case opTools:
		answer = wireTools{Tools: t.tools}
	case opCall:
		answer = t.call(req.Name, req.Arguments)
	default:
		return
	}
	data, err := json.Marshal(answer)
	if err != nil {
		return
	}
	_, _ = conn.Write(append(data, '\n'))
}

// readLine reads one line of at most limit bytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > limit {
			return nil, errors.New("claudecode: request too long")
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// ask sends req to the bot at socket and decodes its answer into out: the
// bridge's side of the socket.
func ask(ctx context.Context, socket string, req wireRequest, out any) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("claudecode: bridge: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := conn.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("claudecode: bridge: %w", err)
	}
	line, err := readLine(bufio.NewReaderSize(conn, 64<<10), maxRequestBytes)
	if err != nil {
		return fmt.Errorf("claudecode: bridge: the bot gave no answer (the turn is over or the secret is wrong): %w", err)
	}
	return json.Unmarshal(line, out)
}
