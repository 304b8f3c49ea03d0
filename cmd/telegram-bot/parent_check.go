package main

import (
	"bytes"
	"fmt"
	"os"
)

// exposingParent reports whether this process's parent holds one of secrets
// in an environment this process (and so any process of the same user, the
// agent's included) can read through /proc/<ppid>/environ. That is the case
// under `go run`, whose go command stays alive, unhardened, with the whole
// environment, for as long as the bot runs. Pid 1 is checked too: in the
// image it is tini, which holds the whole environment as the bot's user
// and must be kept unreadable (execute-only). It returns the message to
// warn with, naming the parent's pid and never a value, or "".
func exposingParent(procDir string, ppid int, secrets []string) string {
	if ppid <= 0 {
		return ""
	}
	data, err := os.ReadFile(fmt.Sprintf("%s/%d/environ", procDir, ppid))
	if err != nil {
		return "" // unreadable: hardened, another user, or gone
	}
	for _, s := range secrets {
		if len(s) > 0 && bytes.Contains(data, []byte(s)) {
			comm, _ := os.ReadFile(fmt.Sprintf("%s/%d/comm", procDir, ppid))
			return fmt.Sprintf("the parent process %d (%s) holds the bot's secrets in an environment the agent's processes can read "+
				"through /proc/%d/environ: build the binary and exec it (or use the Docker image) instead of `go run` or a wrapper that stays alive",
				ppid, bytes.TrimSpace(comm), ppid)
		}
	}
	return ""
}
