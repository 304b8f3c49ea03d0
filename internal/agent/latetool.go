package agent

import "errors"

// AddTool offers t to the model from the next turn of every session on,
// during activation or at any time after it: for an extension whose tools
// become known later (an MCP server that answers after start-up). Its name
// must be unique across the agent: a duplicate, or a tool added after
// [Agent.Close], is refused with an error. A schema the loop cannot use
// leaves the tool out with a warning, as at start-up. It is safe for
// concurrent use.
func (api *API) AddTool(t Tool) error {
	a := api.agent
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return errors.New("agent: closed; the tool is not added")
	}
	return a.addTool(t, api.name)
}

// tool returns the registered tool named name.
func (a *Agent) tool(name string) (*registeredTool, bool) {
	a.toolsMu.RLock()
	defer a.toolsMu.RUnlock()
	rt, ok := a.toolIndex[name]
	return rt, ok
}

// toolNameList returns the names of every tool the model is offered, in
// order.
func (a *Agent) toolNameList() []string {
	a.toolsMu.RLock()
	defer a.toolsMu.RUnlock()
	names := make([]string, 0, len(a.tools))
	for _, t := range a.tools {
		names = append(names, t.spec.Name)
	}
	return names
}
