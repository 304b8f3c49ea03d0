package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/procgroup"
)

// TestedVersion is the claude version the provider's flags and event
// shapes were checked against; the Dockerfile pins it.
const TestedVersion = "2.1.197"

// statusTimeout bounds each of the status probes.
const statusTimeout = 30 * time.Second

// Status is what the CLI says about itself and its login.
type Status struct {
	// Version is `claude --version`'s version ("2.1.197").
	Version string
	// LoggedIn and AuthMethod are from `claude auth status --json`.
	LoggedIn   bool
	AuthMethod string
}

// Probe runs `claude --version` and `claude auth status --json` as
// provider processes (the allow-listed environment of [Environ], in home)
// for the doctor. command "" is claude on the PATH. Errors are named by
// kind ([ErrCLIMissing]); claude's own output is never in them.
func Probe(ctx context.Context, command, home string, host map[string]string, oauthToken string) (Status, error) {
	if command == "" {
		command = "claude"
	}
	env := Environ(host, home, "", oauthToken)
	if !strings.Contains(command, "/") {
		path, err := lookPath(command, env)
		if err != nil {
			return Status{}, ErrCLIMissing
		}
		command = path
	}
	dir := home
	if _, err := os.Stat(home); err != nil {
		dir = "/" // the bot has not made the provider home yet
	}
	pc := processContext(env, dir)
	run := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, statusTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, command, args...)
		pc.ApplyTo(cmd)
		procgroup.Set(cmd)
		cmd.WaitDelay = time.Second
		return cmd.Output()
	}
	var st Status
	out, err := run("--version")
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return st, ErrCLIMissing
		}
		return st, fmt.Errorf("claudecode: claude --version failed: %w", exitOnly(err))
	}
	st.Version, _, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
	out, err = run("auth", "status", "--json")
	var auth struct {
		LoggedIn   bool   `json:"loggedIn"`
		AuthMethod string `json:"authMethod"`
	}
	if jerr := json.Unmarshal(out, &auth); jerr != nil {
		if err == nil {
			err = jerr
		}
		return st, fmt.Errorf("claudecode: claude auth status failed: %w", exitOnly(err))
	}
	st.LoggedIn, st.AuthMethod = auth.LoggedIn, auth.AuthMethod
	return st, nil
}

// exitOnly keeps an exec error's exit status, dropping the stderr an
// ExitError carries.
func exitOnly(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return errors.New(ee.ProcessState.String())
	}
	return err
}

// OlderThan reports whether version (as `claude --version` prints it) is
// older than min; a version that does not parse counts as older.
func OlderThan(version, min string) bool {
	a, b := parseVersion(version), parseVersion(min)
	if a == nil || b == nil {
		return true
	}
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// parseVersion reads major.minor.patch.
func parseVersion(v string) []int {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return nil
	}
	out := make([]int, 3)
	for i, p := range parts {
		n := 0
		for _, r := range p {
			if r < '0' || r > '9' {
				return nil
			}
			n = n*10 + int(r-'0')
		}
		out[i] = n
	}
	return out
}
