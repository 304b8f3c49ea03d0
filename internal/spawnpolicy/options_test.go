package spawnpolicy

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDefaultDenyIsTheSpecTable checks the default deny-list entry by
// entry: the globs, the credential carriers, then the names.
func TestDefaultDenyIsTheSpecTable(t *testing.T) {
	want := []string{
		"*_API_KEY", "*_APIKEY", "*__APIKEY",
		"*_TOKEN", "*__*TOKEN",
		"*_SECRET", "*__*SECRET",
		"*_PASSWORD", "*__*PASSWORD",
		"*_KEY", "*__*KEY",
		"*_PAT", "*__*PAT",
		"*_PASS", "*__*PASS",
		"*_PASSWD", "*__*PASSWD",
		"*_DSN", "*__*DSN",
		"*_AUTH", "*__*AUTH",
		"*_CREDENTIALS", "*__*CREDENTIALS",
		"*_WEBHOOK_URL", "*__*WEBHOOKURL",
		"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "GOOGLE_CLIENT_SECRET",
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	}
	if diff := cmp.Diff(want, DefaultDeny); diff != "" {
		t.Errorf("DefaultDeny (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, DefaultOptions().Deny); diff != "" {
		t.Errorf("DefaultOptions().Deny (-want +got):\n%s", diff)
	}
}

func TestDefaultOptionsAreFreshCopies(t *testing.T) {
	first := DefaultOptions()
	if !first.HardenHostProcess {
		t.Error("DefaultOptions().HardenHostProcess = false, want true")
	}
	first.Deny[0] = "CHANGED"
	if DefaultOptions().Deny[0] == "CHANGED" {
		t.Error("DefaultOptions shares its Deny slice between calls")
	}
	if DefaultDeny[0] == "CHANGED" {
		t.Error("DefaultOptions().Deny shares DefaultDeny")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		// want lists one substring per expected problem, in order.
		want []string
	}{
		{name: "defaults are valid", opts: DefaultOptions()},
		{name: "zero options are valid", opts: Options{}},
		{name: "allow of a glob-denied name is valid", opts: optionsWith(func(o *Options) { o.Allow = []string{"GITHUB_TOKEN", "*_TOKEN"} })},
		{name: "short and empty secret values are ignored, not errors", opts: Options{SecretValues: []string{"", "short"}}},
		{
			name: "an explicitly denied name in Allow",
			opts: optionsWith(func(o *Options) { o.Allow = []string{"telegram_bot_token"} }),
			want: []string{`"telegram_bot_token" is denied explicitly (deny entry "TELEGRAM_BOT_TOKEN")`},
		},
		{name: "empty deny entry", opts: Options{Deny: []string{"A", ""}}, want: []string{"deny entry 1 is empty"}},
		{name: "empty allow entry", opts: Options{Allow: []string{""}}, want: []string{"allow entry 0 is empty"}},
		{name: "= in an entry", opts: Options{Deny: []string{"A=B"}}, want: []string{`deny entry 0 ("A=B") contains '='`}},
		{name: "NUL in an entry", opts: Options{Allow: []string{"A\x00"}}, want: []string{`allow entry 0 ("A\x00") contains '\x00'`}},
		{name: "white space in an entry", opts: Options{Deny: []string{"GH TOKEN"}}, want: []string{`contains ' '`}},
		{name: "a newline in an entry", opts: Options{Deny: []string{"GH_TOKEN\n"}}, want: []string{`contains '\n'`}},
		{name: "invalid UTF-8 in an entry", opts: Options{Deny: []string{"A\xff"}}, want: []string{`deny entry 0`}},
		{name: "a nil hook", opts: Options{Hooks: []Hook{func(c Context) (Context, error) { return c, nil }, nil}}, want: []string{"hooks[1] is nil"}},
		{
			name: "every problem at once",
			opts: Options{
				Deny:  []string{"", "GH_TOKEN", "A=B"},
				Allow: []string{"gh_token", " "},
				Hooks: []Hook{nil},
			},
			want: []string{"deny entry 0 is empty", `deny entry 2 ("A=B")`, `allow entry 1 (" ")`, `"gh_token" is denied explicitly`, "hooks[0] is nil"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil, want an error")
			}
			var joined interface{ Unwrap() []error }
			if !errors.As(err, &joined) {
				t.Fatalf("Validate() = %T, want a joined error", err)
			}
			var got []string
			for _, e := range joined.Unwrap() {
				got = append(got, e.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Validate() reported %d problems, want %d: %q", len(got), len(tt.want), got)
			}
			for i, want := range tt.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}
