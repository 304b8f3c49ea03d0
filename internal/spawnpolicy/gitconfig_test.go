package spawnpolicy

import (
	"maps"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPrepareKeepsGitConfigUsable gives the bot git configuration in its
// environment (GIT_CONFIG_COUNT and its pairs), one pair an http.extraHeader
// carrying a known secret, which the value rule removes: the pairs left
// must be numbered again and counted, since git refuses to run with a
// count that names a missing variable. A configuration the filter did not
// touch stays as it was. Values holding the secret are shown as <secret>.
func TestPrepareKeepsGitConfigUsable(t *testing.T) {
	header := "AUTHORIZATION: bearer " + secretGitHub
	tests := []struct {
		name string
		git  []string
		want map[string]string
	}{
		{
			name: "the carrier among other pairs",
			git: []string{"GIT_CONFIG_COUNT", "3", "GIT_CONFIG_KEY_0", "user.name", "GIT_CONFIG_VALUE_0", "Bot",
				"GIT_CONFIG_KEY_1", "http.extraHeader", "GIT_CONFIG_VALUE_1", header,
				"GIT_CONFIG_KEY_2", "safe.directory", "GIT_CONFIG_VALUE_2", "*"},
			want: map[string]string{"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Bot",
				"GIT_CONFIG_KEY_1": "safe.directory", "GIT_CONFIG_VALUE_1": "*"},
		},
		{
			name: "the carrier alone",
			git:  []string{"GIT_CONFIG_COUNT", "1", "GIT_CONFIG_KEY_0", "http.extraHeader", "GIT_CONFIG_VALUE_0", header},
			want: map[string]string{},
		},
		{
			name: "untouched, even malformed",
			git:  []string{"GIT_CONFIG_COUNT", "2", "GIT_CONFIG_KEY_0", "user.name", "GIT_CONFIG_VALUE_0", "Bot"},
			want: map[string]string{"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "user.name", "GIT_CONFIG_VALUE_0": "Bot"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := with(keptByDefault(), tt.git...)
			p := newTestPolicy(t, optionsWith(func(o *Options) { o.SecretValues = []string{secretGitHub} }), nil, env)
			c, err := p.Prepare(bashRequest())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			got := map[string]string{}
			for name, value := range c.Env {
				if strings.HasPrefix(name, "GIT_CONFIG_") {
					if strings.Contains(value, secretGitHub) {
						value = "<secret>"
					}
					got[name] = value
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("git configuration in the prepared environment (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("git runs with it", func(t *testing.T) {
		git, err := exec.LookPath("git")
		if err != nil {
			t.Skip("needs git")
		}
		env := with(keptByDefault(), tests[0].git...)
		p := newTestPolicy(t, optionsWith(func(o *Options) { o.SecretValues = []string{secretGitHub} }), nil, env)
		c, err := p.Prepare(bashRequest())
		if err != nil {
			t.Fatalf("Prepare: %v", err)
		}
		cmd := exec.Command(git, "config", "--get", "user.name")
		cmd.Dir = t.TempDir()
		vars := maps.Clone(c.Env)
		vars["HOME"] = t.TempDir()
		for name, value := range vars {
			cmd.Env = append(cmd.Env, name+"="+value)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "Bot" {
			t.Errorf("git config --get user.name: %v, %d bytes of output, want Bot", err, len(out))
		}
	})
}
