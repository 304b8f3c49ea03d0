package spawnpolicy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// standInGitHub is GH_TOKEN's stand-in in these tests: no secret.
const standInGitHub = "ghp_standinvalue9876543210abcd"

func TestStandInsWithholdAndExtra(t *testing.T) {
	env := map[string]string{
		"PATH": "/usr/bin", "GH_TOKEN": secretGitHub, "NPM_TOKEN": "npm_token_value_0123456789",
		"HF_TOKEN": "hf_zxcvbnmlkjhgfdsa", "HTTPS_PROXY": "http://corporate:3128",
	}
	opts := DefaultOptions()
	opts.HardenHostProcess = false
	opts.Allow = []string{"GH_TOKEN", "NPM_*"}
	opts.SecretValues = []string{secretGitHub, "npm_token_value_0123456789"}
	opts.StandIns = map[string]string{"GH_TOKEN": standInGitHub, "HF_TOKEN": "hf_qwertyuiopasdfgh"}
	opts.Withhold = []string{"NPM_TOKEN"}
	opts.Extra = map[string]string{"HTTPS_PROXY": "http://127.0.0.1:4000", "SSL_CERT_FILE": "/ca/bundle.pem"}
	p := newTestPolicy(t, opts, nil, env)

	c, err := p.Prepare(Request{Command: "env", Cwd: "/", Env: map[string]*string{"SSL_CERT_FILE": ptr("/own.pem")}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"PATH":          "/usr/bin",
		"GH_TOKEN":      standInGitHub,
		"HTTPS_PROXY":   "http://127.0.0.1:4000",
		"SSL_CERT_FILE": "/own.pem",
	}
	if diff := cmp.Diff(masked(want), masked(c.Env)); diff != "" {
		t.Errorf("prepared environment (-want +got):\n%s", diff)
	}

	for name, want := range map[string]string{"GH_TOKEN": standInGitHub, "HTTPS_PROXY": "http://127.0.0.1:4000", "PATH": "/usr/bin"} {
		if got, ok := p.Lookup(name); !ok || got != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", name, maskValue(got), ok, want)
		}
	}
	for _, name := range []string{"NPM_TOKEN", "HF_TOKEN", "UNSET"} {
		if got, ok := p.Lookup(name); ok {
			t.Errorf("Lookup(%s) = %q, want nothing: agent processes do not get it", name, maskValue(got))
		}
	}
	if diff := cmp.Diff([]string{"GH_TOKEN", "HF_TOKEN"}, p.StandInNames()); diff != "" {
		t.Error(diff)
	}
	var rule string
	for _, r := range p.Explain() {
		if r.Name == "NPM_TOKEN" {
			rule = r.Rule
		}
	}
	if !strings.HasPrefix(rule, "withheld") {
		t.Errorf("Explain gives NPM_TOKEN the rule %q, want withheld", rule)
	}
	if got := opts.Passed(env); !cmp.Equal(got, []string{"GH_TOKEN"}) {
		t.Errorf("Passed = %v, want GH_TOKEN alone: a withheld variable reaches no process", got)
	}
}

func TestSubstitutesValidated(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"stand-in holding a secret", Options{SecretValues: []string{secretGitHub}, StandIns: map[string]string{"GH_TOKEN": "x" + secretGitHub}}, "the value for GH_TOKEN holds a secret value"},
		{"extra holding a secret", Options{SecretValues: []string{secretGitHub}, Extra: map[string]string{"HTTPS_PROXY": "http://u:" + secretGitHub + "@h"}}, "the value for HTTPS_PROXY holds a secret value"},
		{"extra with a bad name", Options{Extra: map[string]string{"A=B": "x"}}, "contains '='"},
		{"stand-in with a NUL", Options{StandIns: map[string]string{"GH_TOKEN": "a\x00b"}}, "NUL"},
		{"withhold glob", Options{Withhold: []string{"GH_*"}}, "withhold entry 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secretGitHub) {
				t.Fatal("the error holds the secret")
			}
		})
	}
}

func TestAllows(t *testing.T) {
	opts := DefaultOptions()
	opts.Allow = []string{"GH_TOKEN", "NPM_*", "TELEGRAM_*"}
	opts.Deny = append(opts.Deny, "NPM_SECRET_TOKEN")
	opts.Withhold = []string{"GH_TOKEN"}
	for name, want := range map[string]bool{"GH_TOKEN": false, "NPM_TOKEN": true, "npm_token": true, "NPM_SECRET_TOKEN": false, "TELEGRAM_BOT_TOKEN": false, "HF_TOKEN": false} {
		if got := opts.Allows(name); got != want {
			t.Errorf("Allows(%s) = %v, want %v", name, got, want)
		}
	}
}
