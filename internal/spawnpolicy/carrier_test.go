package spawnpolicy

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPrepareRemovesVariablesThatHoldASecret plants a known secret inside
// the values of variables no deny rule names, in the forms a deployment
// writes it (an HTTP header for git, a JSON configuration, base64 of a
// user:token pair, hex, a percent-encoded query value, a trailing line
// break): each variable must be removed, as one whose value is exactly the
// secret is. The secrets the MCP loader adds (a value an MCP server's env
// gets from ${VAR}) reach the policy only as SecretValues, so the policy's
// value rule is all that keeps a variable carrying one from every child.
// Only names are compared: a failure prints no value.
func TestPrepareRemovesVariablesThatHoldASecret(t *testing.T) {
	jsonConfig, err := json.Marshal(map[string]string{"token": secretGitHub})
	if err != nil {
		t.Fatal(err)
	}
	carriers := map[string]string{
		"GIT_CONFIG_VALUE_0":   "AUTHORIZATION: bearer " + secretGitHub,
		"TOOL_CONFIG_JSON":     string(jsonConfig),
		"DOCKER_AUTH_CONFIG":   base64.StdEncoding.EncodeToString([]byte("x-access-token:" + secretGitHub)),
		"SIGNING_BLOB_HEX":     hex.EncodeToString([]byte(secretGitHub)),
		"STATUS_PAGE":          "https://status.example/report?id=7&t=" + url.QueryEscape(secretGitHub),
		"GITHUB_TOKEN_NEWLINE": secretGitHub + "\n",
	}
	env := with(keptByDefault(), "OTHER", "not-a-secret-value")
	for name, value := range carriers {
		env[name] = value
	}
	p := newTestPolicy(t, optionsWith(func(o *Options) { o.SecretValues = []string{secretGitHub} }), nil, env)
	got, err := p.Prepare(bashRequest())
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	want := sortedNames(with(keptByDefault(), "OTHER", "not-a-secret-value"))
	if diff := cmp.Diff(want, sortedNames(got.Env)); diff != "" {
		t.Errorf("names in the prepared environment (-want +got):\n%s", diff)
	}
}
