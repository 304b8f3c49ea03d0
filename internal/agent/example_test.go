package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// deployExtension is a small extension: it offers the model one tool,
// deploy_status, that runs a command through the session's ToolContext.Exec.
type deployExtension struct {
	// token is a credential the command needs. It is passed on purpose, so
	// it reaches the child unfiltered; the loop still redacts it.
	token string
}

func (e *deployExtension) Name() string { return "deploy" }

func (e *deployExtension) Activate(_ context.Context, api *agent.API) error {
	// NewTool infers the parameter schema from statusArgs. Effects stays
	// empty: the tool runs a script of its own, not a command the model
	// writes (Effects.Command), and writes no file the model names
	// (Effects.WritesPath).
	api.RegisterTool(agent.NewTool(agent.ToolSpec{
		Name:        "deploy_status",
		Description: "Shows the deployment's status.",
	}, e.status))
	return nil
}

// statusArgs are deploy_status's arguments: the json tag names each, the
// jsonschema tag describes it, and omitempty makes it optional.
type statusArgs struct {
	Service string `json:"service,omitempty" jsonschema:"The service to report on; all of them when left out."`
}

func (e *deployExtension) status(ctx context.Context, call *agent.Call, args statusArgs) (agent.Result, error) {
	// The child's environment is the filtered one (OPENAI_API_KEY is not
	// inherited) plus what Env names on purpose (DEPLOY_TOKEN, SERVICE).
	script := `echo "service: ${SERVICE:-all}"; echo "inherited OPENAI_API_KEY: ${OPENAI_API_KEY:-unset}"; echo "explicit DEPLOY_TOKEN: $DEPLOY_TOKEN"`
	res, err := call.Context.Exec(ctx, "sh", []string{"-c", script}, agent.ExecOptions{
		Env: map[string]*string{"DEPLOY_TOKEN": &e.token, "SERVICE": &args.Service},
	})
	if err != nil {
		return agent.Result{}, err
	}
	// No redaction here: the agent loop redacts every tool result.
	return agent.TextResult(res.Stdout), nil
}

// An extension whose tool runs a command through ToolContext.Exec. The
// spawn policy keeps the inherited secret out of the child's environment;
// the token passed on purpose arrives, and the loop replaces it with
// [REDACTED] before the model sees the result.
func Example_extension() {
	// Tests never harden their own process: the first call wins.
	hardening.Apply(false, slog.New(slog.DiscardHandler))

	const secret = "sk-fake-0123456789abcdef" // a fake secret, never a real one
	opts := spawnpolicy.DefaultOptions()
	opts.HardenHostProcess = false
	opts.SecretValues = []string{secret}
	// The environment children inherit from is injected, never the test's own.
	environ := func() map[string]string {
		return map[string]string{"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": secret}
	}
	policy, err := spawnpolicy.New(opts, nil, environ)
	if err != nil {
		fmt.Println(err)
		return
	}

	provider := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("deploy_status", `{"service":"web"}`)),
		agenttest.FauxText("done"),
	)
	a, err := agent.New(provider, policy, redactor.New(opts.SecretValues),
		agent.WithExtensions(&deployExtension{token: secret}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	session, err := a.Session(ctx, agent.SessionOptions{ID: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := session.Prompt(ctx, []agent.Content{agent.Text("How is the deployment?")}, nil); err != nil {
		fmt.Println(err)
		return
	}

	// The second request carries the tool result, as the model sees it.
	messages := provider.Requests()[1].Messages
	fmt.Println(strings.TrimSpace(agent.TextOf(messages[len(messages)-1].Content)))
	// Output:
	// service: web
	// inherited OPENAI_API_KEY: unset
	// explicit DEPLOY_TOKEN: [REDACTED]
}
