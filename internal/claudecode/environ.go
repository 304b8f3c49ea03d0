package claudecode

import (
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"

	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// allowedNames are the host variables claude's environment keeps.
var allowedNames = []string{
	"PATH", "USER", "LANG", "TMPDIR", "TMP", "TEMP",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"NODE_EXTRA_CA_CERTS",
}

// OAuthTokenVar is the variable holding the login token `claude
// setup-token` prints; claude alone receives it.
const OAuthTokenVar = "CLAUDE_CODE_OAUTH_TOKEN"

// ConfigDir is the provider home's directory that claude keeps its login,
// settings and sessions in (CLAUDE_CONFIG_DIR).
func ConfigDir(home string) string { return filepath.Join(home, ".claude") }

// Process is the spawn-policy context of a claude process run in dir: its
// complete environment is Environ's allow-list, which the specification's
// section 7 gives the provider in place of the policy's prepared one, and
// it runs outside the sandbox (claude keeps its login in the provider
// home, which agent processes cannot read). Its ApplyTo gives an exec.Cmd
// that environment and directory, never an inherited one.
func Process(host map[string]string, home, tz, oauthToken, dir string) spawnpolicy.Context {
	return processContext(Environ(host, home, tz, oauthToken), dir)
}

// processContext is the context of a claude process with the complete
// environment env (NAME=value entries) in dir.
func processContext(env []string, dir string) spawnpolicy.Context {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		m[name] = value
	}
	return spawnpolicy.Context{Purpose: spawnpolicy.Other, Cwd: dir, Env: m, Origin: "claudecode"}
}

// Environ is the complete environment of a claude process, built from
// host (a snapshot of the bot's environment) by the allow-list: HOME and
// CLAUDE_CONFIG_DIR in home, the allowed host variables and LC_*, tz as TZ
// when not empty, the OAuth token when not empty, and the provider's own
// pins. Nothing else of host passes, whatever it holds.
func Environ(host map[string]string, home, tz, oauthToken string) []string {
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + ConfigDir(home), "DISABLE_AUTOUPDATER=1"}
	for _, name := range allowedNames {
		if v, ok := host[name]; ok {
			env = append(env, name+"="+v)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(host)) {
		if strings.HasPrefix(name, "LC_") {
			env = append(env, name+"="+host[name])
		}
	}
	if tz != "" {
		env = append(env, "TZ="+tz)
	}
	if oauthToken != "" {
		env = append(env, OAuthTokenVar+"="+oauthToken)
	}
	return env
}

// RefusedVariables are the host variables the Claude Code provider refuses
// to start with: each would make claude bill an API key or another cloud
// instead of the operator's Claude plan, or send it to another endpoint.
var RefusedVariables = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
	"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
	"ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID",
}
