// Package approvals asks the chat before risky tool calls run: an agent
// extension that handles the tool_call event and blocks what the user does
// not allow.
//
// In [ModeRisky] (the default) it asks before a bash command that one of
// the rules matches, and before a write or edit outside the session's
// workspace (and the directories of [WithWritable]); in [ModeAll] before
// every call but those of the read-only tools, and in [ModeOff] never. A
// call is judged by what its tool declares on its spec ([agent.Effects]:
// the argument it runs as a command, the path argument it writes,
// read-only), never by the tool's name. The
// question goes through an [Asker], which the chat host implements with
// the buttons Allow once, Always in this chat and Deny; "always" decisions
// are kept per chat and rule by a [DecisionStore]. Both are found on each
// turn's context, on the front end the host prompts it with
// ([agent.FrontEnd]). No answer within the timeout, a stopped turn, or a
// request that could not be sent deny the call. A turn nobody watches (a
// scheduled job's, marked with [Unattended]) and one whose context holds
// no asker deny without asking. A denied call's result tells the
// model what happened, so it can say so or ask.
//
// Bash commands are parsed with mvdan.cc/sh, as bash reads them, and every
// simple command is looked at wherever it stands: after ";", "&&" or "||",
// in pipelines, subshells, groups, functions, loops, coprocesses, command
// and process substitutions, and in the scripts given to eval, sh -c,
// su -c, flock -c, script -c, watch, find -exec and here-documents fed to a
// shell. Quotes, escapes, ANSI-C strings and brace expansion are undone
// first; wrappers (env, nice, timeout, xargs, setsid, nsenter, unshare,
// taskset, prlimit, sudo, busybox...) are followed to the command they run
// by looking for it at every operand, since which of a wrapper's options
// take a value is what a parser gets wrong. Strings run later are parsed
// too: trap actions, at jobs and crontab entries from here-documents,
// aliases the command defines, the values of variables programs run as
// commands (GIT_PAGER, GIT_SSH_COMMAND, PROMPT_COMMAND), git configuration
// keys whose value git runs (core.pager, core.sshCommand, diff.*.textconv)
// and a command a tool keeps to run later (a watcher's script, declared
// Deferred), when the call that keeps it is made. A
// command named by a variable from the environment ($SHELL) may be any
// program: its -c script and its operands are looked at. A value the
// command computes itself (a variable it sets, a positional parameter, a
// command substitution) may be anything: as a command name or a script it
// is asked about ([RuleComputedCommand]), and as an argument it counts as
// whatever flag the rule looks for, so "F=-rf; rm $F x" is a recursive
// delete. A variable the command does not set comes from the environment
// the operator controls and is taken as a plain value ("rm -f $HOME/x" is
// not asked about). A command that does not parse is asked about
// ([RuleUnparsable]).
//
// Decisions made here: kill -0 (and kill -l) is not asked about, since
// signal 0 only checks that a process exists; dd is asked about only with
// an of= operand (without one it writes to stdout); git clean only without
// -n; npm uninstall only with -g (a project's own packages are its
// business). What the rules cannot see is what is not in the command: the
// content of a script file run by name (bash build.sh), programs that
// delete by themselves (python -c ...), git aliases from its configuration
// files, files a glob expands to. The sandbox, not this package, is what
// confines those.
package approvals
