package main

import (
	"errors"
	"fmt"

	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// errEgressUnenforced is setupConfinedSandbox's refusal under
// AGENT_EGRESS=required when the kernel cannot confine agent processes'
// network to the proxy.
var errEgressUnenforced = errors.New("AGENT_EGRESS=required, but agent processes' network cannot be confined to the egress proxy")

// setupConfinedSandbox is setupSandbox with the agent processes' network
// confined to the credential proxy when AGENT_EGRESS asks for an
// allow-list (enf.Allowlist). Never silently: where the kernel offers no
// tier (or the sandbox is off), allowlist gets a sandbox without it and
// a warning saying the allow-list holds only for clients that use the
// proxy; required is an error. The returned line names the tier.
func setupConfinedSandbox(cfg Config, environ map[string]string, enf credproxy.Enforcement, running bool, opts ...sandbox.Option) (agentSandbox, string, bool, error) {
	if !running && cfg.Credentials.Egress == credproxy.AllowlistRequired {
		// The proxy did not start: nothing could hold the allow-list.
		return agentSandbox{}, "", false, fmt.Errorf("%w: the credential proxy is not running", errEgressUnenforced)
	}
	if !running || !enf.Allowlist {
		box, err := setupSandbox(cfg, environ, opts...)
		return box, "", false, err
	}
	const unenforced = "agent processes that ignore HTTPS_PROXY reach any host directly (only clients that use the proxy are held to the allow-list)"
	if cfg.Sandbox.Mode == sandbox.Off {
		if enf.Required {
			return agentSandbox{}, "", false, fmt.Errorf("%w: the agent sandbox is off (AGENT_SANDBOX=off)", errEgressUnenforced)
		}
		box, err := setupSandbox(cfg, environ, opts...)
		return box, "Egress allow-list: not enforced by the kernel, the agent sandbox is off; " + unenforced, true, err
	}
	confined := append(append([]sandbox.Option(nil), opts...), sandbox.WithEgress(sandbox.Egress{ProxyPort: uint16(enf.Port)}))
	box, err := setupSandbox(cfg, environ, confined...)
	if err == nil && box.launcher != nil {
		tier, short := box.launcher.Egress()
		line := fmt.Sprintf("Egress allow-list: enforced, %s (%s)", tier, tier.Describe())
		if short != nil {
			line += "; a better tier is out of reach: " + short.Error()
		}
		return box, line, false, nil
	}
	if err == nil {
		// The sandbox is not available (auto without Landlock).
		if enf.Required {
			box.close()
			return agentSandbox{}, "", false, fmt.Errorf("%w: no agent sandbox on this kernel", errEgressUnenforced)
		}
		return box, "Egress allow-list: not enforced by the kernel, no agent sandbox here; " + unenforced, true, nil
	}
	if enf.Required {
		return agentSandbox{}, "", false, fmt.Errorf("%w: %v", errEgressUnenforced, err)
	}
	box, err2 := setupSandbox(cfg, environ, opts...)
	return box, fmt.Sprintf("Egress allow-list: not enforced by the kernel (%v); %s", err, unenforced), true, err2
}

// close ends the launcher, if any.
func (b agentSandbox) close() {
	if b.launcher != nil {
		b.launcher.Close()
	}
}
