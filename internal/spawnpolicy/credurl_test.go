package spawnpolicy

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestURLCredentials(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"a database URL's password", "postgres://app:" + secretDatabase + "@db:5432/app", []string{secretDatabase}},
		{"the password decoded and as spelt", "postgres://app:p%3Ass%24word-0001@db/app", []string{"p:ss$word-0001", "p%3Ass%24word-0001"}},
		{"a password without a user", "redis://:" + secretDatabase + "@cache:6379/0", []string{secretDatabase}},
		{"a token-like query parameter", "https://hooks.example/in?channel=ops&token=" + secretGitHub, []string{secretGitHub}},
		{"a signed URL's signature, decoded and as spelt", "https://bucket.example/o?X-Amz-Signature=ab%2Bcd-0002&X-Amz-Date=20260101", []string{"ab+cd-0002", "ab%2Bcd-0002"}},
		{"an api_key parameter", "https://api.example/v1?api_key=" + secretOpenAI, []string{secretOpenAI}},
		{"short credentials are returned too", "https://u:pw@host/?auth=x", []string{"pw", "x"}},
		{"surrounding white space", " https://u:" + secretDatabase + "@host\n", []string{secretDatabase}},
		{"a user without a password", "https://git@example.test/repo.git", nil},
		{"ordinary query parameters", "https://example.test/search?q=hello&page=2", nil},
		{"an empty token parameter", "https://example.test/?token=", nil},
		{"not a URL", "/usr/bin:/bin", nil},
		{"no host", "file:///etc/passwd", nil},
		{"a plain value", secretDatabase, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := URLCredentials(tt.value)
			// The diff is of the test's own fake values, masked.
			if diff := cmp.Diff(maskAll(tt.want), maskAll(got)); diff != "" {
				t.Errorf("URLCredentials (-want +got):\n%s", diff)
			}
		})
	}
}

// maskAll masks each of values that holds a test secret.
func maskAll(values []string) []string {
	if values == nil {
		return nil
	}
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = maskValue(v)
	}
	return out
}

// TestCredentialURLRule checks that an inherited variable whose value is a
// URL carrying a credential is removed whatever its name, unless Allow
// keeps it, and that Explain names the rule.
func TestCredentialURLRule(t *testing.T) {
	env := with(keptByDefault(),
		"DATABASE_URL", "postgres://app:"+secretDatabase+"@db/app",
		"METRICS_ENDPOINT", "https://push.example/v1?access_token="+secretGitHub,
		"UPSTREAM", "https://upstream.example/api?page=2",
		"REPO", "https://git@example.test/repo.git",
	)
	kept := with(keptByDefault(), "UPSTREAM", env["UPSTREAM"], "REPO", env["REPO"])

	p := newTestPolicy(t, DefaultOptions(), nil, env)
	got, err := p.Prepare(bashRequest())
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if diff := cmp.Diff(sortedNames(kept), sortedNames(got.Env)); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	want := []Removal{{Name: "DATABASE_URL", Rule: "credential URL"}, {Name: "METRICS_ENDPOINT", Rule: "credential URL"}}
	if diff := cmp.Diff(want, p.Explain()); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}

	allowed := newTestPolicy(t, optionsWith(func(o *Options) { o.Allow = []string{"DATABASE_URL"} }), nil, env)
	got, err = allowed.Prepare(bashRequest())
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if _, ok := got.Env["DATABASE_URL"]; !ok {
		t.Error("DATABASE_URL was removed although allowed")
	}
	if _, ok := got.Env["METRICS_ENDPOINT"]; ok {
		t.Error("METRICS_ENDPOINT reaches the child")
	}
}

// TestPassed checks which variables Allow keeps against a rule it wins
// over: those are the ones whose values the host must redact.
func TestPassed(t *testing.T) {
	env := with(hostEnv(),
		"GH_TOKEN", secretGitHub,
		"NPM_AUTH", secretAlias,
		"ALIAS", secretAlias,
		"DATABASE_URL", "postgres://app:"+secretDatabase+"@db/app",
		"ORDINARY_SETTING", "kept",
	)
	tests := []struct {
		name  string
		allow []string
		want  []string
	}{
		{"nothing allowed", nil, nil},
		{"a name a deny glob matches", []string{"GH_TOKEN"}, []string{"GH_TOKEN"}},
		{"a glob", []string{"NPM_*"}, []string{"NPM_AUTH"}},
		{"a secret value under an innocent name", []string{"ALIAS"}, []string{"ALIAS"}},
		{"a credential URL", []string{"DATABASE_URL"}, []string{"DATABASE_URL"}},
		{"an allowed variable no rule removes is not passed", []string{"ORDINARY_SETTING", "PATH"}, nil},
		{"an explicit deny name is never passed", []string{"*_TOKEN", "*_API_KEY"}, []string{"GH_TOKEN", "GITHUB_TOKEN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := optionsWith(func(o *Options) {
				o.Allow = tt.allow
				o.SecretValues = []string{secretAlias}
			})
			if diff := cmp.Diff(tt.want, opts.Passed(env)); diff != "" {
				t.Errorf("Passed (-want +got):\n%s", diff)
			}
			p := newTestPolicy(t, opts, nil, env)
			got, err := p.Prepare(bashRequest())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			for _, name := range tt.want {
				if _, ok := got.Env[name]; !ok {
					t.Errorf("%s is passed but does not reach the child", name)
				}
			}
		})
	}
}

// TestDenied checks which variables a Deny entry removes by name: those are
// the ones whose values the host adds to the secrets it redacts. A variable
// removed for its value alone, or one an Allow glob keeps against a Deny
// glob, is not among them, and the policy removes exactly the ones listed.
func TestDenied(t *testing.T) {
	env := with(hostEnv(),
		"ALIAS", secretAlias,
		"DATABASE_URL", "postgres://app:"+secretDatabase+"@db/app",
		"ORDINARY_SETTING", "kept",
	)
	all := []string{"ANTHROPIC_API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "GOOGLE_CLIENT_SECRET", "GoogleCalendar__ClientSecret", "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "Telegram__BotToken", "Telegram__Speech__ApiKey"}
	tests := []struct {
		name        string
		deny, allow []string
		want        []string
	}{
		{"the default rules", nil, nil, all},
		{"an allowed glob match is kept", nil, []string{"GITHUB_*"}, slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == "GITHUB_TOKEN" })},
		{"an explicit deny name beats an allow glob", []string{"ORDINARY_SETTING"}, []string{"ORDINARY_*"}, slices.Sorted(slices.Values(append(slices.Clone(all), "ORDINARY_SETTING")))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := optionsWith(func(o *Options) {
				o.Deny = append(o.Deny, tt.deny...)
				o.Allow = tt.allow
				o.SecretValues = []string{secretAlias}
			})
			if err := opts.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			got := opts.Denied(env)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Denied (-want +got):\n%s", diff)
			}
			p := newTestPolicy(t, opts, nil, env)
			ctx, err := p.Prepare(bashRequest())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			for _, name := range got {
				if _, ok := ctx.Env[name]; ok {
					t.Errorf("%s is denied but reaches the child", name)
				}
			}
			for _, name := range []string{"ALIAS", "DATABASE_URL"} {
				if slices.Contains(got, name) {
					t.Errorf("%s is removed for its value, not by a deny rule", name)
				}
			}
		})
	}
}
