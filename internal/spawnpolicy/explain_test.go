package spawnpolicy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExplain(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		env  map[string]string
		want []Removal
	}{
		{
			name: "defaults name the rule for each removed variable",
			opts: optionsWith(func(o *Options) {
				o.Allow = []string{"GITHUB_TOKEN"}
				o.SecretValues = []string{secretAlias}
			}),
			env: with(hostEnv(), "ALIAS", secretAlias, "claude_code_oauth_token", "x"),
			want: []Removal{
				{Name: "ALIAS", Rule: "secret value"},
				{Name: "ANTHROPIC_API_KEY", Rule: "ANTHROPIC_API_KEY"},
				{Name: "DB_PASSWORD", Rule: "*_PASSWORD"},
				{Name: "GOOGLE_CLIENT_SECRET", Rule: "GOOGLE_CLIENT_SECRET"},
				{Name: "GoogleCalendar__ClientSecret", Rule: "*__*SECRET"},
				{Name: "OPENAI_API_KEY", Rule: "OPENAI_API_KEY"},
				{Name: "TELEGRAM_BOT_TOKEN", Rule: "TELEGRAM_BOT_TOKEN"},
				{Name: "Telegram__BotToken", Rule: "*__*TOKEN"},
				{Name: "Telegram__Speech__ApiKey", Rule: "*_APIKEY"},
				{Name: "claude_code_oauth_token", Rule: "CLAUDE_CODE_OAUTH_TOKEN"},
			},
		},
		{
			name: "the first matching deny glob in configured order is named",
			opts: Options{Deny: []string{"*_key", "OPENAI_*"}},
			env:  map[string]string{"OPENAI_API_KEY": secretOpenAI, "OPENAI_BASE_URL": "https://example.test"},
			want: []Removal{{Name: "OPENAI_API_KEY", Rule: "*_key"}, {Name: "OPENAI_BASE_URL", Rule: "OPENAI_*"}},
		},
		{
			name: "nothing removed",
			opts: DefaultOptions(),
			env:  keptByDefault(),
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy(t, tt.opts, nil, tt.env)
			if diff := cmp.Diff(tt.want, p.Explain()); diff != "" {
				t.Errorf("Explain (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		want      string
		wantCount int
		wantAllow []string
	}{
		{
			name:      "defaults",
			opts:      DefaultOptions(),
			want:      "Process environment: 31 deny rules, allow: none",
			wantCount: 31,
		},
		{
			name:      "with allow",
			opts:      optionsWith(func(o *Options) { o.Allow = []string{"GH_TOKEN", "NPM_*"} }),
			want:      "Process environment: 31 deny rules, allow: GH_TOKEN, NPM_*",
			wantCount: 31,
			wantAllow: []string{"GH_TOKEN", "NPM_*"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestPolicy(t, tt.opts, nil, nil)
			if got := p.Summary(); got != tt.want {
				t.Errorf("Summary() = %q, want %q", got, tt.want)
			}
			if got := p.DenyCount(); got != tt.wantCount {
				t.Errorf("DenyCount() = %d, want %d", got, tt.wantCount)
			}
			allow := p.AllowNames()
			if diff := cmp.Diff(tt.wantAllow, allow); diff != "" {
				t.Errorf("AllowNames() (-want +got):\n%s", diff)
			}
			if len(allow) > 0 {
				allow[0] = "CHANGED"
				if p.AllowNames()[0] == "CHANGED" {
					t.Error("AllowNames shares the policy's slice")
				}
			}
		})
	}
}
