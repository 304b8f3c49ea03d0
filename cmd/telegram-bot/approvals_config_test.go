package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/approvals"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

func TestParseApprovals(t *testing.T) {
	tests := []struct {
		name        string
		env         Env
		wantMode    approvals.Mode
		wantTimeout time.Duration
		wantRules   []string
		wantSummary string
	}{
		{"defaults", Env{}, approvals.ModeRisky, 10 * time.Minute, nil,
			"risky: the chat is asked before the commands the built-in rules match; no answer within 10m0s denies"},
		{"all with rules", Env{ApprovalMode: " ALL ", ApprovalTimeout: "90s", ApprovalRules: `terraform destroy, x{1,3}`},
			approvals.ModeAll, 90 * time.Second, []string{"terraform destroy", "x{1,3}"},
			"all: the chat is asked before every tool call but read and 2 operator rule(s); no answer within 1m30s denies"},
		{"off", Env{ApprovalMode: "off"}, approvals.ModeOff, 10 * time.Minute, nil, "off: tool calls run without asking"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseApprovals(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			var rules []string
			for _, re := range got.Rules {
				rules = append(rules, re.String())
			}
			if got.Mode != tt.wantMode || got.Timeout != tt.wantTimeout {
				t.Errorf("mode %v timeout %v, want %v %v", got.Mode, got.Timeout, tt.wantMode, tt.wantTimeout)
			}
			if diff := cmp.Diff(tt.wantRules, rules); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantSummary, got.summary()); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

// The approvals do not ask about writes the sandbox's view lets the file
// tools make: its temporary directory and AGENT_SANDBOX_WRITE.
func TestApprovalsWritable(t *testing.T) {
	cfg := Config{}
	cfg.Sandbox.Write = []string{"/srv/shared"}
	if diff := cmp.Diff([]string{"/srv/shared"}, (agentSandbox{}).writable(cfg)); diff != "" {
		t.Errorf("without a sandbox (-want +got):\n%s", diff)
	}
	box := agentSandbox{view: &sandbox.View{Temp: "/tmp/agent", Extra: sandbox.Paths{Write: []string{"/srv/shared"}}}}
	if diff := cmp.Diff([]string{"/tmp/agent", "/srv/shared"}, box.writable(cfg)); diff != "" {
		t.Errorf("with the sandbox (-want +got):\n%s", diff)
	}
}
