package credproxy_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/credproxy"
)

func TestParseBindings(t *testing.T) {
	tests := []struct {
		spec    string
		want    []credproxy.Binding
		wantErr []string
	}{
		{spec: "", want: nil},
		{
			spec: "GH_TOKEN=api.github.com, GitHub.com.;NPM_TOKEN=registry.npmjs.org",
			want: []credproxy.Binding{
				{Variable: "GH_TOKEN", Hosts: []string{"api.github.com", "github.com"}},
				{Variable: "NPM_TOKEN", Hosts: []string{"registry.npmjs.org"}},
			},
		},
		{spec: "GITEA_TOKEN=*.git.example.com", want: []credproxy.Binding{{Variable: "GITEA_TOKEN", Hosts: []string{"*.git.example.com"}}}},
		{spec: "GH_TOKEN=*", wantErr: []string{"GH_TOKEN", "a bare * would match every host"}},
		{spec: "GH_TOKEN=*.com", wantErr: []string{"GH_TOKEN", `"*.com"`, "top-level domain"}},
		{spec: "GH_TOKEN=api.*.com", wantErr: []string{`"api.*.com"`}},
		{spec: "GH_TOKEN=10.0.0.5", wantErr: []string{`"10.0.0.5" is an IP address`}},
		{spec: "GH_TOKEN=gitea.lan:3000", wantErr: []string{"has a port"}},
		{spec: "GH_TOKEN", wantErr: []string{"is not VARIABLE=host,host"}},
		{spec: "1X=a.example", wantErr: []string{`"1X" is not a variable name`}},
		{spec: "GH_TOKEN=", wantErr: []string{"GH_TOKEN has no hosts"}},
		{spec: "GH_TOKEN=a.example;GH_TOKEN=b.example", wantErr: []string{"GH_TOKEN is bound twice"}},
		{spec: "A_TOKEN=*;B_TOKEN=x..y", wantErr: []string{"A_TOKEN", "B_TOKEN"}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := credproxy.ParseBindings(tt.spec)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, want one with %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func TestBuiltinBindings(t *testing.T) {
	b := credproxy.BuiltinBindings(map[string]string{"GH_HOST": "GHE.example.com"})
	byName := map[string][]string{}
	for _, x := range b {
		if !x.Builtin {
			t.Errorf("%s is not marked built-in", x.Variable)
		}
		byName[x.Variable] = x.Hosts
	}
	for name, host := range map[string]string{
		"GH_TOKEN": "api.github.com", "GITHUB_TOKEN": "github.com", "GH_ENTERPRISE_TOKEN": "api.ghe.example.com",
		"NPM_TOKEN": "registry.npmjs.org", "HF_TOKEN": "huggingface.co", "GITLAB_TOKEN": "gitlab.com",
	} {
		if !slices.Contains(byName[name], host) {
			t.Errorf("%s is not bound to %s: %v", name, host, byName[name])
		}
	}
	if _, ok := byName["GH_ENTERPRISE_TOKEN"]; !ok {
		t.Fatal("no GH_ENTERPRISE_TOKEN binding with GH_HOST set")
	}
	for _, x := range credproxy.BuiltinBindings(nil) {
		if x.Variable == "GH_ENTERPRISE_TOKEN" {
			t.Error("GH_ENTERPRISE_TOKEN bound without GH_HOST")
		}
	}
}

func TestResolve(t *testing.T) {
	builtin := credproxy.BuiltinBindings(nil)
	configured, err := credproxy.ParseBindings("GH_TOKEN=ghe.internal.example;GITEA_TOKEN=gitea.lan.example")
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(n string) bool {
		return n == "GH_TOKEN" || n == "GITEA_TOKEN" || n == "NPM_TOKEN" || n == "HF_TOKEN"
	}
	set := func(n string) bool { return n != "HF_TOKEN" }
	got, err := credproxy.Resolve(builtin, configured, allowed, set)
	if err != nil {
		t.Fatal(err)
	}
	want := []credproxy.Binding{
		{Variable: "GH_TOKEN", Hosts: []string{"ghe.internal.example"}},
		{Variable: "GITEA_TOKEN", Hosts: []string{"gitea.lan.example"}},
		{Variable: "NPM_TOKEN", Hosts: []string{"registry.npmjs.org"}, Builtin: true},
	}
	slices.SortFunc(want, func(a, b credproxy.Binding) int { return strings.Compare(a.Variable, b.Variable) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}

	_, err = credproxy.Resolve(builtin, configured, func(n string) bool { return n == "GH_TOKEN" }, set)
	if err == nil || !strings.Contains(err.Error(), "GITEA_TOKEN is not allowed") {
		t.Errorf("a binding of a variable that is not allowed: %v, want an error naming it", err)
	}
}

func TestParseEgress(t *testing.T) {
	for in, want := range map[string]credproxy.Egress{"": credproxy.Open, "open": credproxy.Open, " Allowlist ": credproxy.Allowlist, "required": credproxy.AllowlistRequired} {
		got, err := credproxy.ParseEgress(in)
		if err != nil || got != want {
			t.Errorf("ParseEgress(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := credproxy.ParseEgress("closed"); err == nil {
		t.Error("ParseEgress(closed) is no error")
	}
	if _, err := credproxy.ParseAllow("pypi.org,*"); err == nil || !strings.Contains(err.Error(), "AGENT_EGRESS_ALLOW") {
		t.Errorf("ParseAllow with a bare *: %v", err)
	}
	if got, err := credproxy.ParseAllow("pypi.org, *.pythonhosted.org,192.168.1.10"); err != nil || len(got) != 3 {
		t.Errorf("ParseAllow = %v, %v", got, err)
	}
}
