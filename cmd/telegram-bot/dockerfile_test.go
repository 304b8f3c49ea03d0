package main

import (
	"bufio"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
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
	for _, want := range []string{
		"CGO_ENABLED=0", "-trimpath", `VOLUME ["/data"]`,
		// Node.js from the node image, with npm and npx.
		"COPY --from=node /usr/local/bin/node /usr/local/bin/node",
		"ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm",
		"ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx",
		// tini holds the whole environment as the agent's user: it must be
		// non-dumpable, as an execute-only binary is.
		"chmod 0711 /usr/bin/tini",
		// The commit, since the build context has no .git.
		"ARG SOURCE_COMMIT",
		"-X main.sourceCommit=${SOURCE_COMMIT}",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	checkImageToolbox(t, lines)

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

// checkImageToolbox checks what the agent works with in the image and how
// the image is put together: pinned base images, one apt-get layer without
// recommends, the toolbox, Node.js 22 or newer, tini as PID 1 (execute-only,
// like the bot, since it holds the whole environment), binaries named by
// absolute path where the container's environment runs them, the agent's
// installs in the workspace, and the commit passed into the build.
func checkImageToolbox(t *testing.T, lines []string) {
	t.Helper()
	stages := map[string]bool{}
	var installs []string
	var entrypoint, healthcheck string
	env := map[string]string{}
	for _, l := range lines {
		kw, rest, _ := strings.Cut(l, " ")
		switch strings.ToUpper(kw) {
		case "FROM":
			f := strings.Fields(rest)
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stages[f[2]] = true
			}
			if !stages[f[0]] && !pinnedImage(f[0]) {
				t.Errorf("FROM %s: pin the base image by digest or an exact tag (a version x.y.z or a dated build)", f[0])
			}
			if name, tag, _ := strings.Cut(f[0], ":"); name == "node" {
				if major, err := strconv.Atoi(strings.SplitN(tag, ".", 2)[0]); err != nil || major < 22 {
					t.Errorf("FROM %s: Node.js must be 22 or newer (a maintained LTS)", f[0])
				}
			}
		case "RUN":
			if strings.Contains(rest, "apt-get install") {
				installs = append(installs, rest)
			}
		case "ENTRYPOINT":
			entrypoint = rest
		case "HEALTHCHECK":
			healthcheck = rest
		case "ENV":
			for _, kv := range strings.Fields(rest) {
				if k, v, ok := strings.Cut(kv, "="); ok {
					env[k] = v
				}
			}
		}
	}
	if len(installs) != 1 {
		t.Fatalf("%d RUN instructions install packages, want one apt-get layer", len(installs))
	}
	install := installs[0]
	for _, want := range []string{"apt-get update", "--no-install-recommends", "rm -rf /var/lib/apt/lists/*"} {
		if !strings.Contains(install, want) {
			t.Errorf("the apt-get layer lacks %q", want)
		}
	}
	packages := strings.Fields(install[strings.Index(install, "--no-install-recommends"):])
	for _, want := range []string{"bash", "ca-certificates", "curl", "file", "git", "jq", "less", "make", "openssh-client", "procps",
		"python3", "python3-pip", "python3-venv", "ripgrep", "sqlite3", "tini", "tzdata", "unzip", "wget", "xz-utils", "zip", "$EXTRA_PACKAGES"} {
		if !slices.Contains(packages, want) {
			t.Errorf("the apt-get layer does not install %s", want)
		}
	}
	// gh is a pinned release built in its own stage (Debian's is over a
	// year old), root-owned in the image.
	joined := strings.Join(lines, "\n")
	for _, want := range []string{"FROM golang:1.26.8-trixie AS gh", "ARG GH_VERSION=", "go get github.com/cli/cli/v2/cmd/gh@v${GH_VERSION}",
		"COPY --from=gh --chown=root:root /out/gh /usr/local/bin/gh", "ARG EXTRA_PACKAGES"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	if slices.Contains(packages, "gh") {
		t.Error("the apt-get layer installs Debian's gh, over a year old; the gh stage builds the pinned release")
	}
	if want := `["/usr/bin/tini", "--", "/usr/local/bin/telegram-bot"]`; entrypoint != want {
		t.Errorf("ENTRYPOINT %s, want %s: tini as PID 1 reaps orphans, and absolute paths never find a file the agent wrote", entrypoint, want)
	}
	if !strings.Contains(healthcheck, `"/usr/local/bin/telegram-bot", "healthcheck"`) {
		t.Errorf("HEALTHCHECK %s does not name /usr/local/bin/telegram-bot: it runs with the whole environment and must never find a file the agent wrote", healthcheck)
	}
	dirs := strings.Split(env["PATH"], ":")
	system := slices.Index(dirs, "/usr/bin")
	for _, d := range []string{"/workspace/.local/bin", "/workspace/.npm-global/bin"} {
		switch i := slices.Index(dirs, d); {
		case i < 0:
			t.Errorf("PATH %s lacks %s, where the agent's installs put their commands", env["PATH"], d)
		case system < 0 || i < system:
			t.Errorf("PATH %s: %s comes before /usr/bin, so what the agent installs would shadow system commands", env["PATH"], d)
		}
	}
	if home := env["HOME"]; home == "" || strings.HasPrefix(home+"/", "/workspace/") || strings.HasPrefix(home+"/", "/data/") {
		t.Errorf("ENV HOME=%q: the container's home must be a directory the agent cannot write, or an operator's shell in the container runs the agent's ~/.bashrc with every secret", home)
	}
	for name, want := range map[string]string{"PYTHONUSERBASE": "/workspace/", "npm_config_prefix": "/workspace/", "npm_config_cache": "/workspace/"} {
		if !strings.HasPrefix(env[name], want) {
			t.Errorf("ENV %s=%q, want it under %s: the agent cannot write elsewhere", name, env[name], want)
		}
	}
}

// pinnedImage reports whether an image reference is pinned: by digest, or
// by a tag that holds an exact version (x.y.z) or a build date (YYYYMMDD).
func pinnedImage(ref string) bool {
	if strings.Contains(ref, "@sha256:") {
		return true
	}
	_, tag, ok := strings.Cut(ref, ":")
	return ok && (regexp.MustCompile(`\d+\.\d+\.\d+`).MatchString(tag) || regexp.MustCompile(`\d{8}`).MatchString(tag))
}

// TestComposeFile checks compose.yaml, what Coolify's compose build pack
// deploys: every variable the bot reads is there as ${VAR}, so that Coolify
// lists it; the required ones are marked with :? and the others carry the
// bot's default (the image's directories for AGENT_DIR and WORKSPACE_DIR);
// the volume, the restart policy and the image's health check.
func TestComposeFile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "compose.yaml"))
	if err != nil {
		t.Fatalf("read compose.yaml: %v", err)
	}
	compose := string(data)
	imageDefaults := map[string]string{"AGENT_DIR": "/data", "WORKSPACE_DIR": "/workspace"}
	fields := reflect.TypeFor[Env]()
	for i := range fields.NumField() {
		f := fields.Field(i)
		name := f.Tag.Get("envconfig")
		def, hasDefault := f.Tag.Lookup("default")
		if d, ok := imageDefaults[name]; ok {
			def, hasDefault = d, true
		}
		var want string
		switch {
		case strings.Contains(f.Tag.Get("desc"), "(required"):
			want = name + ": ${" + name + ":?"
		case hasDefault:
			want = name + ": ${" + name + ":-" + def + "}\n"
		default:
			want = name + ": ${" + name + ":-}\n"
		}
		if !strings.Contains(compose, want) {
			t.Errorf("compose.yaml lacks %q: every variable the bot reads is listed, required ones with :?, the others with the bot's default", strings.TrimSpace(want))
		}
	}
	for _, want := range []string{
		"restart: unless-stopped",
		"- data:/data",
		"- workspace:/workspace",
		`test: ["CMD", "/usr/local/bin/telegram-bot", "healthcheck"]`,
		"SOURCE_COMMIT: ${SOURCE_COMMIT:-}",
	} {
		if !strings.Contains(compose, want) {
			t.Errorf("compose.yaml lacks %q", want)
		}
	}
}
