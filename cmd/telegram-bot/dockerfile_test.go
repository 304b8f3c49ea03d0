package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerfile checks the facts the deployment relies on, since no
// container engine runs on the development machines: a non-root USER with a
// fixed uid, the health check, the volume and directories, a static build,
// and no .env or secret copied into the image.
func TestDockerfile(t *testing.T) {
	root := filepath.Join("..", "..")
	lines := readInstructions(t, filepath.Join(root, "Dockerfile"))

	var user, healthcheck string
	var env []string
	stages := 0
	for _, l := range lines {
		kw, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(kw) {
		case "FROM":
			stages++
		case "USER":
			user = rest
		case "HEALTHCHECK":
			healthcheck = rest
		case "ENV":
			env = append(env, rest)
		case "COPY", "ADD":
			lower := strings.ToLower(rest)
			for _, bad := range []string{".env", "secret", "token", "id_rsa", ".pem"} {
				if strings.Contains(lower, bad) {
					t.Errorf("%s copies %q into the image: %s", kw, bad, l)
				}
			}
			if strings.Contains(rest, " . ") || strings.HasPrefix(rest, ". ") {
				t.Errorf("%s copies the whole build context: %s", kw, l)
			}
		case "ARG":
			if upper := strings.ToUpper(rest); strings.Contains(upper, "TOKEN") || strings.Contains(upper, "KEY") || strings.Contains(upper, "SECRET") {
				t.Errorf("a build argument looks like a secret (it would stay in the image history): %s", l)
			}
		}
	}
	if stages < 2 {
		t.Errorf("the Dockerfile has %d stage(s), want a multi-stage build", stages)
	}
	switch uid, _, _ := strings.Cut(user, ":"); {
	case user == "":
		t.Error("no USER: the bot would run as root, and root reads every process's environment")
	case uid == "0" || uid == "root":
		t.Errorf("USER %s is root", user)
	case strings.Trim(uid, "0123456789") != "":
		t.Errorf("USER %s is not a fixed numeric uid", user)
	}
	if !strings.Contains(healthcheck, "telegram-bot") || !strings.Contains(healthcheck, "healthcheck") {
		t.Errorf("HEALTHCHECK = %q, want it to call telegram-bot healthcheck", healthcheck)
	}
	allEnv := strings.Join(env, " ")
	for _, want := range []string{"AGENT_DIR=/data", "WORKSPACE_DIR=/workspace"} {
		if !strings.Contains(allEnv, want) {
			t.Errorf("ENV lacks %s", want)
		}
	}
	for _, name := range []string{"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "GOOGLE_CLIENT_SECRET", "TELEGRAM_SPEECH_API_KEY"} {
		if strings.Contains(allEnv, name) {
			t.Errorf("ENV sets %s: secrets come from the deployment, never the image", name)
		}
	}
	joined := strings.Join(lines, "\n")
	// An execute-only binary is non-dumpable from execve on, so a process
	// Docker starts with the full environment (the healthcheck) is never
	// readable by the agent, not even before it hardens itself.
	if !strings.Contains(joined, "--chmod=0711 /out/telegram-bot /usr/local/bin/telegram-bot") {
		t.Error("the binary is not installed execute-only (--chmod=0711)")
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "bash", "ca-certificates", "tzdata", "git", "curl", "nodejs", "npm", `VOLUME ["/data"]`} {
		if !strings.Contains(joined, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}

	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatalf("read .dockerignore: %v", err)
	}
	if !strings.Contains(string(ignore), ".env") {
		t.Error(".dockerignore does not exclude .env files")
	}
}

// readInstructions returns the Dockerfile's instructions, one per element,
// with continuation lines joined and comments dropped.
func readInstructions(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open Dockerfile: %v", err)
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\"))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		out = append(out, strings.Join(strings.Fields(cur.String()), " "))
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read Dockerfile: %v", err)
	}
	return out
}
