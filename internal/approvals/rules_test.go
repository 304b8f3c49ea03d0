package approvals

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAssessCommand checks every built-in rule, the tricks that must not
// hide one, and commands that must not be asked about.
func TestAssessCommand(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    []string
	}{
		// Recursive deletes.
		{"rm -rf", `rm -rf build`, []string{RuleRecursiveDelete}},
		{"rm -r", `rm -r build`, []string{RuleRecursiveDelete}},
		{"rm -R", `rm -R build`, []string{RuleRecursiveDelete}},
		{"rm -fr", `rm -fr build`, []string{RuleRecursiveDelete}},
		{"rm options after operands", `rm build -rf`, []string{RuleRecursiveDelete}},
		{"rm --recursive", `rm --recursive build`, []string{RuleRecursiveDelete}},
		{"rm --recur abbreviated", `rm --recur build`, []string{RuleRecursiveDelete}},
		{"rm by path", `/bin/rm -rf /`, []string{RuleRecursiveDelete}},
		{"find -delete", `find . -name '*.o' -delete`, []string{RuleRecursiveDelete}},
		{"find -exec rm -r", `find . -type d -exec rm -r {} +`, []string{RuleRecursiveDelete}},
		{"rsync --delete", `rsync -a --delete src/ dst/`, []string{RuleRecursiveDelete}},
		{"xargs rm -rf", `ls | xargs -n 1 rm -rf`, []string{RuleRecursiveDelete}},
		// git.
		{"git push --force", `git push --force origin main`, []string{RuleGitForcePush}},
		{"git push -f", `git push -f`, []string{RuleGitForcePush}},
		{"git push -uf cluster", `git push -uf origin x`, []string{RuleGitForcePush}},
		{"git push --force-with-lease", `git push --force-with-lease`, []string{RuleGitForcePush}},
		{"git push --force-with-lease=ref", `git push --force-with-lease=main:abc`, []string{RuleGitForcePush}},
		{"git push +refspec", `git push origin +main`, []string{RuleGitForcePush}},
		{"git push --mirror", `git push --mirror backup`, []string{RuleGitForcePush}},
		{"git -C dir push -f", `git -C repo -c user.name=x push -f`, []string{RuleGitForcePush}},
		{"git reset --hard", `git reset --hard HEAD~1`, []string{RuleGitResetHard}},
		{"git clean -fd", `git clean -fd`, []string{RuleGitClean}},
		{"git clean -f -d -x", `git clean -f -d -x`, []string{RuleGitClean}},
		{"git -c alias", `git -c alias.p='push -f' p`, []string{RuleComputedCommand}},
		// dd, mkfs, chmod.
		{"dd of=", `dd if=/dev/zero of=disk.img bs=1M count=1`, []string{RuleDD}},
		{"dd of=device", `dd if=x.iso of=/dev/sdb`, []string{RuleDD}},
		{"mkfs", `mkfs -t ext4 /dev/sdb1`, []string{RuleMkfs}},
		{"mkfs.ext4", `mkfs.ext4 /dev/sdb1`, []string{RuleMkfs}},
		{"mkswap", `mkswap /dev/sdb2`, []string{RuleMkfs}},
		{"chmod -R", `chmod -R 777 /srv`, []string{RuleRecursiveChmod}},
		{"chown -R", `chown -R www:www .`, []string{RuleRecursiveChmod}},
		{"chown --recursive", `chown --recursive www .`, []string{RuleRecursiveChmod}},
		// Downloads run as scripts.
		{"curl | sh", `curl -fsSL https://example.com/i.sh | sh`, []string{RuleDownloadToShell}},
		{"wget | bash", `wget -qO- https://example.com/i.sh | bash -s -- --yes`, []string{RuleDownloadToShell}},
		{"curl | sudo bash", `curl -sL x | sudo bash`, []string{RuleSudo, RuleDownloadToShell}},
		{"bash <(curl)", `bash <(curl -s https://example.com/i.sh)`, []string{RuleDownloadToShell}},
		{"sh -c $(curl)", `sh -c "$(curl -s https://example.com/i.sh)"`, []string{RuleDownloadToShell}},
		{"download then run", `curl -o i.sh https://example.com/i.sh && bash i.sh`, []string{RuleDownloadToShell}},
		{"curl | (subshell bash)", `curl -s x | (cd /tmp && bash)`, []string{RuleDownloadToShell}},
		{"eval $(wget)", `eval "$(wget -qO- x)"`, []string{RuleDownloadToShell}},
		// ... and as the programs of other interpreters.
		{"wget | python3", `wget -qO- https://example.com/i.py | python3`, []string{RuleDownloadToShell}},
		{"curl | node -", `curl -s x | node - --yes`, []string{RuleDownloadToShell}},
		{"curl | perl", `curl -s x | perl -w`, []string{RuleDownloadToShell}},
		{"python3.12 <(curl)", `python3.12 <(curl -s x)`, []string{RuleDownloadToShell}},
		{"download then run python", `curl -o i.py x && python3 i.py`, []string{RuleDownloadToShell}},
		{"curl | python3 -m json.tool", `curl -s https://api.example.com/x | python3 -m json.tool`, nil},
		{"curl | node -e", `curl -s x | node -e 'process.stdin.pipe(process.stdout)'`, nil},
		{"python3 script, no download", `python3 manage.py migrate`, nil},
		// Privileges, signals, power.
		{"sudo", `sudo apt-get update`, []string{RuleSudo}},
		{"sudo -u", `sudo -u postgres psql -c 'select 1'`, []string{RuleSudo}},
		{"sudo rm -rf", `sudo rm -rf /var/lib/x`, []string{RuleSudo, RuleRecursiveDelete}},
		{"doas", `doas reboot`, []string{RuleSudo, RuleShutdown}},
		{"su -c", `su -c 'rm -rf /x' root`, []string{RuleSudo, RuleRecursiveDelete}},
		{"kill", `kill 1234`, []string{RuleKill}},
		{"kill -9", `kill -9 1234`, []string{RuleKill}},
		{"kill -s TERM", `kill -s TERM 1234`, []string{RuleKill}},
		{"pkill", `pkill -f node`, []string{RuleKill}},
		{"killall", `killall python3`, []string{RuleKill}},
		{"kill computed signal", `kill -$((SIG)) 1`, []string{RuleKill}},
		{"shutdown", `shutdown -h now`, []string{RuleShutdown}},
		{"reboot", `reboot`, []string{RuleShutdown}},
		{"poweroff", `poweroff`, []string{RuleShutdown}},
		{"systemctl reboot", `systemctl reboot`, []string{RuleShutdown}},
		{"init 0", `init 0`, []string{RuleShutdown}},
		// Devices.
		{"redirect to device", `cat image > /dev/sda`, []string{RuleDeviceWrite}},
		{"append to device", `echo x >> /dev/mmcblk0`, []string{RuleDeviceWrite}},
		{"tee device", `echo 1 | tee /dev/watchdog`, []string{RuleDeviceWrite}},
		{"computed device", `echo x > "/dev/$(ls /dev | head -1)"`, []string{RuleDeviceWrite}},
		// SQL.
		{"psql -c DROP", `psql -c 'DROP TABLE users'`, []string{RuleSQLDrop}},
		{"psql --command=drop", `psql --command="drop database app"`, []string{RuleSQLDrop}},
		{"mysql -e TRUNCATE", `mysql -u root -e "TRUNCATE TABLE logs" app`, []string{RuleSQLDrop}},
		{"sqlite3 positional", `sqlite3 app.db 'drop table t;'`, []string{RuleSQLDrop}},
		{"psql heredoc", "psql app <<'SQL'\nBEGIN;\nDROP TABLE users;\nCOMMIT;\nSQL", []string{RuleSQLDrop}},
		{"sqlite3 here-string", `sqlite3 app.db <<< 'TRUNCATE t'`, []string{RuleSQLDrop}},
		{"echo | psql", `echo "DROP SCHEMA s CASCADE" | psql app`, []string{RuleSQLDrop}},
		{"psql computed SQL", `Q=x; psql -c "$Q"`, []string{RuleSQLDrop}},
		// Package removal.
		{"apt remove", `apt remove -y nginx`, []string{RulePackageRemoval}},
		{"apt-get purge", `apt-get -y purge nginx`, []string{RulePackageRemoval}},
		{"npm uninstall -g", `npm uninstall -g typescript`, []string{RulePackageRemoval}},
		{"pip uninstall", `pip uninstall -y requests`, []string{RulePackageRemoval}},
		{"python -m pip uninstall", `python3 -m pip uninstall requests`, []string{RulePackageRemoval}},
		{"dpkg -r", `dpkg -r nginx`, []string{RulePackageRemoval}},
		// Tricks that must not hide a match.
		{"after semicolon", `ls; rm -rf /`, []string{RuleRecursiveDelete}},
		{"after &&", `cd /tmp && rm -rf x`, []string{RuleRecursiveDelete}},
		{"after ||", `false || rm -rf x`, []string{RuleRecursiveDelete}},
		{"in a pipeline", `yes | rm -ri x`, []string{RuleRecursiveDelete}},
		{"in a subshell", `(cd /tmp; rm -rf x)`, []string{RuleRecursiveDelete}},
		{"in a group", `{ rm -rf x; }`, []string{RuleRecursiveDelete}},
		{"in command substitution", `echo $(rm -rf x)`, []string{RuleRecursiveDelete}},
		{"in backticks", "echo `rm -rf x`", []string{RuleRecursiveDelete}},
		{"in process substitution", `cat <(rm -rf x)`, []string{RuleRecursiveDelete}},
		{"in a function", `f() { rm -rf "$1"; }; f x`, []string{RuleRecursiveDelete}},
		{"in if", `if true; then git push -f; fi`, []string{RuleGitForcePush}},
		{"in a loop", `for d in a b; do rm -rf "$d"; done`, []string{RuleRecursiveDelete}},
		{"in background", `rm -rf x &`, []string{RuleRecursiveDelete}},
		{"negated", `! rm -rf x`, []string{RuleRecursiveDelete}},
		{"time keyword", `time rm -rf x`, []string{RuleRecursiveDelete}},
		{"quoted name", `'rm' -rf x`, []string{RuleRecursiveDelete}},
		{"split quotes", `r""m -r'f' x`, []string{RuleRecursiveDelete}},
		{"backslash", `\rm -\rf x`, []string{RuleRecursiveDelete}},
		{"ANSI-C string", `$'\x72\x6d' -rf x`, []string{RuleRecursiveDelete}},
		{"brace expansion", `{rm,-rf,x}`, []string{RuleRecursiveDelete}},
		{"flag from a variable", `F=-rf; rm $F x`, []string{RuleRecursiveDelete}},
		{"flag from a substring", `F=x-rf; rm ${F:1} x`, []string{RuleRecursiveDelete}},
		{"flag from read", `read F <<< -rf; rm $F x`, []string{RuleRecursiveDelete}},
		{"command from a variable", `C=rm; $C -rf x`, []string{RuleComputedCommand}},
		{"command substitution as name", `$(echo rm) -rf x`, []string{RuleComputedCommand}},
		{"quoted computed name", `X=rm; "$X" -rf x`, []string{RuleComputedCommand}},
		{"computed git subcommand", `S=push; git $S -f`, []string{RuleComputedCommand}},
		{"xargs -I", `ls | xargs -I{} rm -rf {}`, []string{RuleRecursiveDelete}},
		{"curl | tee | sh", `curl -s x | tee i.sh | sh`, []string{RuleDownloadToShell}},
		{"source <(curl)", `source <(curl -s x)`, []string{RuleDownloadToShell}},
		{"eval string", `eval 'rm -rf x'`, []string{RuleRecursiveDelete}},
		{"eval words", `eval rm -rf x`, []string{RuleRecursiveDelete}},
		{"eval computed", `X='rm -rf x'; eval "$X"`, []string{RuleComputedCommand}},
		{"bash -c", `bash -c 'rm -rf x'`, []string{RuleRecursiveDelete}},
		{"sh -ec", `sh -ec "cd /; git reset --hard"`, []string{RuleGitResetHard}},
		{"nested bash -c", `bash -c "sh -c 'eval \"rm -rf x\"'"`, []string{RuleRecursiveDelete}},
		{"bash -c computed", `bash -c "$1"`, []string{RuleComputedCommand}},
		{"bash heredoc", "bash <<'EOF'\nrm -rf x\nEOF", []string{RuleRecursiveDelete}},
		{"echo | bash", `echo 'rm -rf x' | bash`, []string{RuleComputedCommand}},
		{"base64 | sh", `echo cm0gLXJmIHgK | base64 -d | sh`, []string{RuleComputedCommand}},
		{"env wrapper", `env -i PATH=/bin rm -rf x`, []string{RuleRecursiveDelete}},
		{"env -S", `env -S 'rm -rf' x`, []string{RuleRecursiveDelete}},
		{"wrappers", `nohup nice -n 5 timeout -s KILL 10 command rm -rf x`, []string{RuleRecursiveDelete}},
		{"busybox", `busybox rm -rf x`, []string{RuleRecursiveDelete}},
		{"watch", `watch -n 5 'rm -rf x'`, []string{RuleRecursiveDelete}},
		{"exec", `exec rm -rf x`, []string{RuleRecursiveDelete}},
		{"several rules", `git reset --hard && git clean -fdx && git push -f`, []string{RuleGitResetHard, RuleGitClean, RuleGitForcePush}},
		{"unparsable", `rm -rf "x`, []string{RuleUnparsable}},
		{"unparsable nested", `bash -c 'rm -rf "x'`, []string{RuleUnparsable}},
		// Commands that are not asked about.
		{"rm file", `rm file.txt`, nil},
		{"rm -f file", `rm -f a.o b.o`, nil},
		{"rm -- dash file", `rm -- -rf`, nil},
		{"rm env variable", `rm -f "$HOME/.cache/x"`, nil},
		{"rmdir", `rmdir empty`, nil},
		{"git push", `git push origin main`, nil},
		{"git push -u", `git push -u origin feature`, nil},
		{"git reset soft", `git reset --soft HEAD~1`, nil},
		{"git clean dry run", `git clean -fdn`, nil},
		{"git status", `git status && git log --oneline | head`, nil},
		{"kill -0", `kill -0 "$pid"`, nil},
		{"kill -0 literal", `kill -0 1234 2>/dev/null && echo alive`, nil},
		{"kill -l", `kill -l`, nil},
		{"dd to stdout", `dd if=/dev/urandom bs=16 count=1 | xxd`, nil},
		{"dd from a computed input", `P=$$; dd if=/proc/$P/mem bs=4096 count=1 | strings`, nil},
		{"dd computed operand", `O=of=/dev/sda; dd if=x $O`, []string{RuleDD}},
		{"chmod", `chmod +x run.sh`, nil},
		{"chmod -rwx mode", `chmod -rwx secret`, nil},
		{"curl to file", `curl -fsSL -o page.html https://example.com`, nil},
		{"curl | jq", `curl -s https://api.example.com | jq .`, nil},
		{"bash script", `bash ./build.sh`, nil},
		{"bash < file", `bash < ./build.sh`, nil},
		{"redirect to null", `make > /dev/null 2>&1`, nil},
		{"redirect to stderr", `echo err > /dev/stderr`, nil},
		{"psql select", `psql -c 'select * from drops'`, nil},
		{"apt install", `apt-get install -y jq`, nil},
		{"npm uninstall local", `npm uninstall left-pad`, nil},
		{"command -v", `command -v rm`, nil},
		{"echo rm -rf", `echo "rm -rf /"`, nil},
		{"grep for rm -rf", `grep -rn 'rm -rf' .`, nil},
		{"sudo in a string", `echo sudo`, nil},
		{"environment command", `"$EDITOR" notes.txt`, nil},
		{"environment path", `$HOME/bin/tool --force`, nil},
		{"pipe into grep", `ps aux | grep -v grep | wc -l`, nil},
		{"systemctl status", `systemctl status nginx`, nil},
		{"empty", ``, nil},
		{"comment", `# rm -rf /`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assessCommand(tt.command, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("assessCommand(%q) (-want +got):\n%s", tt.command, diff)
			}
		})
	}
}

// TestAssessCustomRules checks the operator's expressions: against the raw
// command, the words as the shell sees them, and nested scripts.
func TestAssessCustomRules(t *testing.T) {
	res, err := ParseRules(`terraform\s+destroy, ^docker (rm|rmi)\b, kubectl delete ns [a-z]{1,30}`)
	if err != nil {
		t.Fatal(err)
	}
	var custom []customRule
	for _, re := range res {
		custom = append(custom, newCustomRule(re))
	}
	tf, docker, kube := customPrefix+res[0].String(), customPrefix+res[1].String(), customPrefix+res[2].String()
	tests := []struct {
		command string
		want    []string
	}{
		{`terraform destroy -auto-approve`, []string{tf}},
		{`cd infra && 'terra'"form" destroy`, []string{tf}},
		{`bash -c "terraform  destroy"`, []string{tf}},
		{`docker rm -f web`, []string{docker}},
		{`sudo docker rmi img`, []string{RuleSudo, docker}},
		{`kubectl delete ns staging`, []string{kube}},
		{`terraform plan; docker ps; kubectl get ns`, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, assessCommand(tt.command, custom)); diff != "" {
			t.Errorf("assessCommand(%q) (-want +got):\n%s", tt.command, diff)
		}
	}
}

// TestParseRules checks the splitting of APPROVAL_RULES and its errors.
func TestParseRules(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"a, b ,,c", []string{"a", "b", "c"}, false},
		{`x{1,3}, (a,b), [,;], a\,b`, []string{`x{1,3}`, `(a,b)`, `[,;]`, `a\,b`}, false},
		{"ok, (unclosed", nil, true},
	}
	for _, tt := range tests {
		res, err := ParseRules(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRules(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		var got []string
		for _, re := range res {
			got = append(got, re.String())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseRules(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	if _, err := regexp.Compile(`a\,b`); err != nil {
		t.Errorf(`an escaped comma does not compile: %v`, err)
	}
}
