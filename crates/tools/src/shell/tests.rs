use super::*;

fn dump(n: Node, src: &str, depth: usize, out: &mut String) {
    let t = src.get(n.start_byte()..n.end_byte()).unwrap_or("?");
    out.push_str(&format!(
        "{}{}{} {:?}{}\n",
        "  ".repeat(depth),
        if n.is_named() { "" } else { "'" },
        n.kind(),
        t,
        if n.is_missing() { " MISSING" } else { "" }
    ));
    let mut c = n.walk();
    for ch in n.children(&mut c) {
        dump(ch, src, depth + 1, out);
    }
}

/// `CORDON_SHELL_DEBUG='line' cargo test -p cordon-tools debug_print -- --nocapture`
#[test]
fn debug_print() {
    let Ok(line) = std::env::var("CORDON_SHELL_DEBUG") else {
        return;
    };
    for line in line.split("\n---\n") {
        let tree = parse_tree(line, Instant::now() + Duration::from_secs(5)).unwrap();
        let mut s = String::new();
        dump(tree.root_node(), line, 0, &mut s);
        println!("=== {line:?}\n{s}");
        let p = parse(line);
        for c in &p.commands {
            println!("  cmd {:?}   <- {:?}", c.words, c.text);
        }
        for c in &p.concerns {
            println!("  concern {c:?}");
        }
    }
}

/// Concern kinds, for the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum K {
    /// Unparsed
    U,
    /// DynamicCommand
    D,
    /// Opaque
    O,
    /// WriteRedirect
    W,
    /// LoaderVariable
    L,
    /// Environment
    E,
    /// Rebinding
    R,
    /// Network
    N,
    /// DynamicRedirect
    I,
    /// Outside (the modelled subset)
    X,
}
use K::*;

fn kind(c: &Concern) -> K {
    match c {
        Concern::Unparsed(_) => U,
        Concern::DynamicCommand(_) => D,
        Concern::Opaque(_) | Concern::OptionEffect(_) => O,
        Concern::WriteRedirect(_) => W,
        Concern::LoaderVariable(_) => L,
        Concern::Environment(_) => E,
        Concern::Rebinding(_) => R,
        Concern::Network(_) => N,
        Concern::DynamicRedirect(_) => I,
        Concern::Outside(_) => X,
    }
}

type Case = (
    &'static str,
    &'static [&'static [&'static str]],
    &'static [K],
);

const CASES: &[Case] = &[
    // ---- plain and compound -------------------------------------------------------
    ("ls", &[&["ls"]], &[]),
    ("ls -la /tmp", &[&["ls", "-la", "/tmp"]], &[]),
    ("", &[], &[]),
    ("   # just a comment", &[], &[]),
    ("ls && rm -rf x", &[&["ls"], &["rm", "-rf", "x"]], &[]),
    ("ls || rm -rf x", &[&["ls"], &["rm", "-rf", "x"]], &[]),
    ("ls; rm -rf x", &[&["ls"], &["rm", "-rf", "x"]], &[]),
    ("ls & rm -rf x", &[&["ls"], &["rm", "-rf", "x"]], &[]),
    ("ls\nrm -rf x", &[&["ls"], &["rm", "-rf", "x"]], &[]),
    (
        "ls | grep a | rm x",
        &[&["ls"], &["grep", "a"], &["rm", "x"]],
        &[],
    ),
    ("ls |& cat", &[&["ls"], &["cat"]], &[]),
    (
        "(cd /tmp && rm -rf x)",
        &[&["cd", "/tmp"], &["rm", "-rf", "x"]],
        &[],
    ),
    ("{ ls; rm x; }", &[&["ls"], &["rm", "x"]], &[]),
    ("! rm x", &[&["rm", "x"]], &[]),
    (
        "if true; then rm a; elif ls; then rm b; else rm c; fi",
        &[&["true"], &["rm", "a"], &["ls"], &["rm", "b"], &["rm", "c"]],
        &[],
    ),
    (
        "for f in a b; do rm \"$f\"; done",
        &[&["rm", "\"$f\""]],
        &[],
    ),
    (
        "for ((i=0; i<3; i++)); do echo $i; done",
        &[&["echo", "$i"]],
        &[],
    ),
    (
        "while read l; do rm \"$l\"; done < list",
        &[&["read", "l"], &["rm", "\"$l\""]],
        &[],
    ),
    (
        "until false; do sleep 1; done",
        &[&["false"], &["sleep", "1"]],
        &[],
    ),
    (
        "case $x in a) rm a;; b|c) ls;; *) :;; esac",
        &[&["rm", "a"], &["ls"], &[":"]],
        &[],
    ),
    ("f() { rm -rf /; }; f", &[&["rm", "-rf", "/"], &["f"]], &[]),
    ("function g { ls; }", &[&["ls"]], &[]),
    ("ls &&\n  rm x", &[&["ls"], &["rm", "x"]], &[]),
    ("ls \\\n  -la", &[&["ls", "-la"]], &[]),
    ("a=1 b=2", &[], &[]),
    ("x=1; rm $x", &[&["rm", "$x"]], &[]),
    ("time ls -l", &[&["time", "ls", "-l"], &["ls", "-l"]], &[]),
    // `[` is a command (issue 22): bash's builtin, with `]` its last argument.
    (
        "[ -f x ] && rm x",
        &[&["[", "-f", "x", "]"], &["rm", "x"]],
        &[],
    ),
    ("[[ -d d ]] || mkdir d", &[&["mkdir", "d"]], &[W]),
    ("(( n > 3 )) && echo big", &[&["echo", "big"]], &[O]),
    ("ls # && rm -rf /", &[&["ls"]], &[]),
    ("echo a#b", &[&["echo", "a#b"]], &[]),
    // ---- substitutions ------------------------------------------------------------
    ("echo $(rm x)", &[&["echo", "$(rm x)"], &["rm", "x"]], &[]),
    ("echo `rm x`", &[&["echo", "`rm x`"], &["rm", "x"]], &[]),
    (
        "echo \"a $(rm x) b\"",
        &[&["echo", "\"a $(rm x) b\""], &["rm", "x"]],
        &[],
    ),
    // (A prefix assignment is in the command's environment; an upper-case one may be an
    // inherited, so exported, variable; an exported one always is: E.)
    ("X=$(rm -rf x) ls", &[&["ls"], &["rm", "-rf", "x"]], &[E]),
    ("X=$(rm -rf x)", &[&["rm", "-rf", "x"]], &[E]),
    ("x=$(rm -rf x)", &[&["rm", "-rf", "x"]], &[]),
    (
        "export A=$(rm q)",
        &[&["export", "A=$(rm q)"], &["rm", "q"]],
        &[E],
    ),
    ("local x=`id`", &[&["local", "x=`id`"], &["id"]], &[]),
    (
        "diff <(ls a) <(ls b)",
        &[&["diff", "<(ls a)", "<(ls b)"], &["ls", "a"], &["ls", "b"]],
        &[],
    ),
    ("tee >(rm x) < f", &[&["tee", ">(rm x)"], &["rm", "x"]], &[]),
    ("cat < $(rm x)", &[&["cat"], &["rm", "x"]], &[I]),
    ("ls > \"$(rm y)\"", &[&["ls"], &["rm", "y"]], &[W]),
    ("[[ $(rm a) == y ]]", &[&["rm", "a"]], &[]),
    (
        "[ \"$(rm a)\" = y ]",
        &[&["[", "\"$(rm a)\"", "=", "y", "]"], &["rm", "a"]],
        &[],
    ),
    (
        "echo $(( $(rm s) + 1 ))",
        &[&["echo", "$(( $(rm s) + 1 ))"], &["rm", "s"]],
        &[O],
    ),
    ("(( x = $(rm b) ))", &[&["rm", "b"]], &[O]),
    ("cat <<< \"$(rm w)\"", &[&["cat"], &["rm", "w"]], &[]),
    ("cat <<< $(id)", &[&["cat"], &["id"]], &[]),
    (
        "echo ${x:-$(rm t)}",
        &[&["echo", "${x:-$(rm t)}"], &["rm", "t"]],
        &[],
    ),
    ("a[$(rm u)]=1", &[&["rm", "u"]], &[O]),
    ("x=(1 $(rm v))", &[&["rm", "v"]], &[]),
    ("for i in $(ls); do :; done", &[&["ls"], &[":"]], &[]),
    ("case $(rm c) in *) ;; esac", &[&["rm", "c"]], &[]),
    (
        "echo $(echo $(rm deep))",
        &[
            &["echo", "$(echo $(rm deep))"],
            &["echo", "$(rm deep)"],
            &["rm", "deep"],
        ],
        &[],
    ),
    ("cat <<EOF\n$(rm e)\nEOF", &[&["cat"], &["rm", "e"]], &[]),
    ("cat <<'EOF'\n$(rm e)\nEOF", &[&["cat"]], &[]),
    ("cat <<\"EOF\"\n`rm e`\nEOF", &[&["cat"]], &[]),
    (
        "cat <<EOF && rm y\nbody\nEOF",
        &[&["cat"], &["rm", "y"]],
        &[],
    ),
    ("cat <<EOF > out\nhi\nEOF", &[&["cat"]], &[W]),
    (
        "echo \"$(ls)\" | xargs rm",
        &[&["echo", "\"$(ls)\""], &["ls"], &["xargs", "rm"], &["rm"]],
        &[],
    ),
    (
        "while [ $(rm w) ]; do :; done",
        // Unquoted, the substitution's output may split into `-v a[$(cmd)]`.
        &[&["[", "$(rm w)", "]"], &["rm", "w"], &[":"]],
        &[O],
    ),
    // ---- quoting and obfuscation --------------------------------------------------
    ("r''m -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("\"rm\" -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("'rm' -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("\\rm -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("r\\m -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("$'rm' -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("$'\\x72\\x6d' -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("$'\\162\\155' x", &[&["rm", "x"]], &[]),
    ("$'r\\u006d' x", &[&["rm", "x"]], &[]),
    ("\"r\"'m' x", &[&["rm", "x"]], &[]),
    ("r\\\nm -rf x", &[&["rm", "-rf", "x"]], &[]),
    ("\"r\\m\" x", &[&["r\\m", "x"]], &[]),
    ("'r\\m' x", &[&["r\\m", "x"]], &[]),
    ("/bin/rm -rf x", &[&["/bin/rm", "-rf", "x"]], &[]),
    ("echo \"rm x\"", &[&["echo", "rm x"]], &[]),
    ("echo 'rm -rf /'", &[&["echo", "rm -rf /"]], &[]),
    ("echo a\\ b", &[&["echo", "a b"]], &[]),
    ("echo \"\\$x \\\\ \\q\"", &[&["echo", "$x \\ \\q"]], &[]),
    ("echo $'a\\tb'", &[&["echo", "a\tb"]], &[]),
    ("echo \"a\"'b'c", &[&["echo", "abc"]], &[]),
    ("$CMD x", &[&["$CMD", "x"]], &[D]),
    ("\"$CMD\" x", &[&["\"$CMD\"", "x"]], &[D]),
    ("${CMD} x", &[&["${CMD}", "x"]], &[D]),
    (
        "\"$(echo rm)\" x",
        &[&["\"$(echo rm)\"", "x"], &["echo", "rm"]],
        &[D],
    ),
    (
        "$(echo rm) -rf x",
        &[&["$(echo rm)", "-rf", "x"], &["echo", "rm"]],
        &[D],
    ),
    ("`echo rm` x", &[&["`echo rm`", "x"], &["echo", "rm"]], &[D]),
    ("{r,}m x", &[&["r,}m", "x"]], &[U]),
    ("x{r,}m y", &[&["x{r,}m", "y"]], &[D]),
    ("r{m,} y", &[&["r{m,}", "y"]], &[D]),
    ("/bin/r? -rf x", &[&["/bin/r?", "-rf", "x"]], &[D]),
    ("/usr/bin/r[m] x", &[&["/usr/bin/r[m]", "x"]], &[D]),
    ("$\"rm\" x", &[&["$\"rm\"", "x"]], &[D]),
    ("r$()m x", &[&["r$()m", "x"]], &[U, D]),
    (
        "echo *.rs {a,b} ~/x",
        &[&["echo", "*.rs", "{a,b}", "~/x"]],
        &[],
    ),
    ("rm -rf \"$HOME\"", &[&["rm", "-rf", "\"$HOME\""]], &[]),
    // ---- wrappers -----------------------------------------------------------------
    (
        "sudo rm -rf /",
        &[&["sudo", "rm", "-rf", "/"], &["rm", "-rf", "/"]],
        &[],
    ),
    (
        "sudo -u root -E rm x",
        &[&["sudo", "-u", "root", "-E", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "sudo --user=root -- rm x",
        &[&["sudo", "--user=root", "--", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "sudo -iu root rm x",
        &[&["sudo", "-iu", "root", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    ("sudo -l", &[&["sudo", "-l"]], &[]),
    (
        "sudo FOO=1 rm x",
        &[&["sudo", "FOO=1", "rm", "x"], &["rm", "x"]],
        &[E],
    ),
    (
        "sudo LANG=C rm x",
        &[&["sudo", "LANG=C", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "sudo LD_PRELOAD=/x.so ls",
        &[&["sudo", "LD_PRELOAD=/x.so", "ls"], &["ls"]],
        &[L],
    ),
    ("sudo -Z rm x", &[&["sudo", "-Z", "rm", "x"]], &[U]),
    (
        "doas -u root rm x",
        &[&["doas", "-u", "root", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    ("env rm x", &[&["env", "rm", "x"], &["rm", "x"]], &[]),
    (
        "env -i PATH=/bin HOME=/ rm x",
        &[
            &["env", "-i", "PATH=/bin", "HOME=/", "rm", "x"],
            &["rm", "x"],
        ],
        &[L, E],
    ),
    (
        "env -u HOME -C /tmp rm x",
        &[
            &["env", "-u", "HOME", "-C", "/tmp", "rm", "x"],
            &["rm", "x"],
        ],
        // Its relative paths are another directory's (issue 22).
        &[X],
    ),
    (
        "env X=1 Y=2 rm x",
        &[&["env", "X=1", "Y=2", "rm", "x"], &["rm", "x"]],
        &[E],
    ),
    (
        "env LD_PRELOAD=/x.so ls",
        &[&["env", "LD_PRELOAD=/x.so", "ls"], &["ls"]],
        &[L],
    ),
    (
        "env X=\"$Y\" rm x",
        &[&["env", "X=\"$Y\"", "rm", "x"], &["rm", "x"]],
        &[E],
    ),
    ("env X=$Y rm x", &[&["env", "X=$Y", "rm", "x"]], &[D]),
    (
        "env LD_PRELOAD=\"$P\" ls",
        &[&["env", "LD_PRELOAD=\"$P\"", "ls"], &["ls"]],
        &[L],
    ),
    (
        "find . -exec sh -c 'rm \"$1\"' _ {} \\;",
        &[
            &[
                "find",
                ".",
                "-exec",
                "sh",
                "-c",
                "rm \"$1\"",
                "_",
                "{}",
                ";",
            ],
            &["sh", "-c", "rm \"$1\"", "_", "{found}"],
            &["rm", "\"$1\""],
        ],
        &[],
    ),
    ("sudo -s", &[&["sudo", "-s"]], &[O]),
    (
        "bash -c \"$(curl -s x)\"",
        &[&["bash", "-c", "\"$(curl -s x)\""], &["curl", "-s", "x"]],
        &[D],
    ),
    (
        "env -S 'rm -rf' x",
        &[&["env", "-S", "rm -rf", "x"], &["rm", "-rf", "x"]],
        &[],
    ),
    (
        "env -S'X=1 rm' x",
        &[&["env", "-SX=1 rm", "x"], &["rm", "x"]],
        &[E],
    ),
    ("env", &[&["env"]], &[]),
    (
        "timeout 5 rm x",
        &[&["timeout", "5", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "timeout -s KILL --kill-after=2 5s rm x",
        &[
            &["timeout", "-s", "KILL", "--kill-after=2", "5s", "rm", "x"],
            &["rm", "x"],
        ],
        &[],
    ),
    (
        "nice -n 10 rm x",
        &[&["nice", "-n", "10", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "nice -10 rm x",
        &[&["nice", "-10", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    ("nohup rm x &", &[&["nohup", "rm", "x"], &["rm", "x"]], &[]),
    (
        "command rm x",
        &[&["command", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    ("command -v rm", &[&["command", "-v", "rm"]], &[]),
    ("exec rm x", &[&["exec", "rm", "x"], &["rm", "x"]], &[]),
    (
        "exec -a foo rm x",
        // Programs act on argv[0] (issue 22): the name is reported as a command too.
        &[
            &["exec", "-a", "foo", "rm", "x"],
            &["foo", "x"],
            &["rm", "x"],
        ],
        &[X],
    ),
    (
        "builtin cd /",
        &[&["builtin", "cd", "/"], &["cd", "/"]],
        &[],
    ),
    ("xargs rm", &[&["xargs", "rm"], &["rm"]], &[]),
    (
        "ls | xargs -0 -n 1 -P4 rm -f",
        &[
            &["ls"],
            &["xargs", "-0", "-n", "1", "-P4", "rm", "-f"],
            &["rm", "-f"],
        ],
        &[],
    ),
    (
        "xargs -I {} mv {} /tmp",
        &[
            &["xargs", "-I", "{}", "mv", "{}", "/tmp"],
            &["mv", "{}", "/tmp"],
        ],
        // mv writes its operands (issue 13, class 3).
        &[W],
    ),
    (
        "xargs -I{} sh -c 'echo {}'",
        &[
            &["xargs", "-I{}", "sh", "-c", "echo {}"],
            &["sh", "-c", "echo {}"],
        ],
        &[D],
    ),
    ("xargs", &[&["xargs"], &["echo"]], &[]),
    (
        "find . -exec rm {} \\;",
        &[&["find", ".", "-exec", "rm", "{}", ";"], &["rm", "{found}"]],
        &[],
    ),
    (
        "find . -name '*.tmp' -execdir rm -f {} +",
        &[
            &[
                "find", ".", "-name", "*.tmp", "-execdir", "rm", "-f", "{}", "+",
            ],
            &["rm", "-f", "{}"],
        ],
        &[],
    ),
    (
        "find / -ok chmod 777 {} ';'",
        &[
            &["find", "/", "-ok", "chmod", "777", "{}", ";"],
            &["chmod", "777", "/{found}"],
        ],
        &[W],
    ),
    (
        "find . -exec {} \\;",
        &[&["find", ".", "-exec", "{}", ";"], &["{found}"]],
        &[D],
    ),
    (
        "find . -name \"$PAT\" -delete",
        &[&["find", ".", "-name", "\"$PAT\"", "-delete"]],
        &[],
    ),
    (
        "find . $ACTION rm \\;",
        &[&["find", ".", "$ACTION", "rm", ";"]],
        &[D],
    ),
    (
        "watch -n 5 'ls; rm x'",
        &[&["watch", "-n", "5", "ls; rm x"], &["ls"], &["rm", "x"]],
        &[],
    ),
    ("watch ls -l", &[&["watch", "ls", "-l"], &["ls", "-l"]], &[]),
    (
        "watch -x rm x",
        &[&["watch", "-x", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "stdbuf -oL -e0 rm x",
        &[&["stdbuf", "-oL", "-e0", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "ionice -c3 rm x",
        &[&["ionice", "-c3", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "chrt -f 10 rm x",
        &[&["chrt", "-f", "10", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "taskset -c 0 rm x",
        &[&["taskset", "-c", "0", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    ("taskset -p 123", &[&["taskset", "-p", "123"]], &[]),
    (
        "setsid -f rm x",
        &[&["setsid", "-f", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "unbuffer rm x",
        &[&["unbuffer", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    // flock creates its file (round 8).
    (
        "flock /tmp/l rm x",
        &[&["flock", "/tmp/l", "rm", "x"], &["rm", "x"]],
        &[W],
    ),
    (
        "flock -w 3 /tmp/l -c 'rm x'",
        &[&["flock", "-w", "3", "/tmp/l", "-c", "rm x"], &["rm", "x"]],
        &[W],
    ),
    (
        "script -qc 'rm x' /dev/null",
        &[&["script", "-qc", "rm x", "/dev/null"], &["rm", "x"]],
        &[],
    ),
    (
        "su -c 'rm x' root",
        &[&["su", "-c", "rm x", "root"], &["rm", "x"]],
        &[],
    ),
    (
        "su - root -c 'rm x'",
        &[&["su", "-", "root", "-c", "rm x"], &["rm", "x"]],
        &[],
    ),
    (
        "runuser -u nobody -- rm x",
        &[&["runuser", "-u", "nobody", "--", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "chroot /srv rm x",
        &[&["chroot", "/srv", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "strace -f -o /tmp/t rm x",
        &[&["strace", "-f", "-o", "/tmp/t", "rm", "x"], &["rm", "x"]],
        // `-o FILE` writes it (issue 13, class 3).
        &[W],
    ),
    (
        "ltrace -e malloc rm x",
        &[&["ltrace", "-e", "malloc", "rm", "x"], &["rm", "x"]],
        &[],
    ),
    (
        "sudo env X=1 timeout 5 rm x",
        &[
            &["sudo", "env", "X=1", "timeout", "5", "rm", "x"],
            &["env", "X=1", "timeout", "5", "rm", "x"],
            &["timeout", "5", "rm", "x"],
            &["rm", "x"],
        ],
        &[E],
    ),
    (
        "nice nohup \\sudo r''m x",
        &[
            &["nice", "nohup", "sudo", "rm", "x"],
            &["nohup", "sudo", "rm", "x"],
            &["sudo", "rm", "x"],
            &["rm", "x"],
        ],
        &[],
    ),
    (
        "/usr/bin/sudo /bin/rm x",
        &[&["/usr/bin/sudo", "/bin/rm", "x"], &["/bin/rm", "x"]],
        &[],
    ),
    ("sudo $CMD x", &[&["sudo", "$CMD", "x"]], &[D]),
    ("timeout $T rm x", &[&["timeout", "$T", "rm", "x"]], &[D]),
    (
        "env \"$(echo rm)\" x",
        &[&["env", "\"$(echo rm)\"", "x"], &["echo", "rm"]],
        &[D],
    ),
    ("coproc rm x", &[&["coproc", "rm", "x"], &["rm", "x"]], &[]),
    (
        "busybox rm -rf x",
        &[&["busybox", "rm", "-rf", "x"], &["rm", "-rf", "x"]],
        &[],
    ),
    (
        "git -c core.pager=less log",
        &[&["git", "-c", "core.pager=less", "log"]],
        &[],
    ),
    // ---- shell strings ------------------------------------------------------------
    (
        "sh -c 'rm -rf x'",
        &[&["sh", "-c", "rm -rf x"], &["rm", "-rf", "x"]],
        &[],
    ),
    (
        "bash -c \"ls && rm x\"",
        &[&["bash", "-c", "ls && rm x"], &["ls"], &["rm", "x"]],
        &[],
    ),
    (
        "bash -lc 'rm x'",
        &[&["bash", "-lc", "rm x"], &["rm", "x"]],
        &[],
    ),
    (
        "bash -ec 'rm x'",
        &[&["bash", "-ec", "rm x"], &["rm", "x"]],
        &[],
    ),
    (
        "bash -c -x 'rm x'",
        &[&["bash", "-c", "-x", "rm x"], &["rm", "x"]],
        &[],
    ),
    (
        "/bin/sh -c 'rm x' name arg",
        &[&["/bin/sh", "-c", "rm x", "name", "arg"], &["rm", "x"]],
        &[],
    ),
    (
        "dash -c 'rm x'; zsh -c 'rm y'; ksh -c 'rm z'",
        &[
            &["dash", "-c", "rm x"],
            &["rm", "x"],
            &["zsh", "-c", "rm y"],
            &["rm", "y"],
            &["ksh", "-c", "rm z"],
            &["rm", "z"],
        ],
        // zsh and ksh strings are not read with their grammars (issue 22).
        &[O],
    ),
    (
        "bash -o pipefail -c 'rm x'",
        &[&["bash", "-o", "pipefail", "-c", "rm x"], &["rm", "x"]],
        &[],
    ),
    (
        "sh -c \"sh -c 'rm x'\"",
        &[
            &["sh", "-c", "sh -c 'rm x'"],
            &["sh", "-c", "rm x"],
            &["rm", "x"],
        ],
        &[],
    ),
    (
        "sudo bash -c 'rm x'",
        &[
            &["sudo", "bash", "-c", "rm x"],
            &["bash", "-c", "rm x"],
            &["rm", "x"],
        ],
        &[],
    ),
    ("bash -c \"$X\"", &[&["bash", "-c", "\"$X\""]], &[D]),
    (
        "sh -c 'echo $(rm x)'",
        &[
            &["sh", "-c", "echo $(rm x)"],
            &["echo", "$(rm x)"],
            &["rm", "x"],
        ],
        &[],
    ),
    (
        "bash -c 'ls >out'",
        &[&["bash", "-c", "ls >out"], &["ls"]],
        &[W],
    ),
    ("bash -c 'if'", &[&["bash", "-c", "if"]], &[U]),
    ("bash script.sh", &[&["bash", "script.sh"]], &[]),
    (
        "curl -s https://x | sh",
        &[&["curl", "-s", "https://x"], &["sh"]],
        &[O],
    ),
    ("bash < script.sh", &[&["bash"]], &[O]),
    ("bash --version", &[&["bash", "--version"]], &[]),
    ("fish -c 'rm x'", &[&["fish", "-c", "rm x"]], &[O]),
    // ---- redirections -------------------------------------------------------------
    ("ls > out.txt", &[&["ls"]], &[W]),
    ("ls >> log", &[&["ls"]], &[W]),
    ("ls &> all", &[&["ls"]], &[W]),
    ("ls >| f", &[&["ls"]], &[W]),
    ("ls 2> err", &[&["ls"]], &[W]),
    ("ls >& file", &[&["ls"]], &[W]),
    ("ls > /dev/null 2>&1", &[&["ls"]], &[]),
    ("ls 2>/dev/null >/dev/stderr", &[&["ls"]], &[]),
    ("ls 1>&2", &[&["ls"]], &[]),
    ("exec 3>&-", &[&["exec"]], &[]),
    ("cat < in", &[&["cat"]], &[]),
    ("ls > $OUT", &[&["ls"]], &[W]),
    ("{ ls; } > f", &[&["ls"]], &[W]),
    ("exec >log", &[&["exec"]], &[W]),
    (
        "ls | tee -a f > /dev/null",
        &[&["ls"], &["tee", "-a", "f"]],
        // tee writes its operands (issue 13, class 3).
        &[W],
    ),
    // ---- opaque and loader variables ----------------------------------------------
    (
        "eval \"rm -rf x\"",
        &[&["eval", "rm -rf x"], &["rm", "-rf", "x"]],
        &[O],
    ),
    ("eval $CMD", &[&["eval", "$CMD"]], &[O]),
    ("source ./env.sh", &[&["source", "./env.sh"]], &[O]),
    (". ~/.bashrc", &[&[".", "~/.bashrc"]], &[O]),
    (
        "trap 'rm -rf x' EXIT",
        &[&["trap", "rm -rf x", "EXIT"], &["rm", "-rf", "x"]],
        &[O],
    ),
    ("trap - INT", &[&["trap", "-", "INT"]], &[]),
    ("alias ls='rm -rf'", &[&["alias", "ls=rm -rf"]], &[O]),
    (
        "builtin eval x",
        &[&["builtin", "eval", "x"], &["eval", "x"], &["x"]],
        &[O],
    ),
    ("LD_PRELOAD=/tmp/x.so ls", &[&["ls"]], &[L]),
    ("LD_LIBRARY_PATH=/tmp ls", &[&["ls"]], &[L]),
    ("DYLD_INSERT_LIBRARIES=x.dylib ls", &[&["ls"]], &[L]),
    (
        "export LD_PRELOAD=/x.so; ls",
        &[&["export", "LD_PRELOAD=/x.so"], &["ls"]],
        &[L],
    ),
    (
        "BASH_ENV=/tmp/evil bash -c ls",
        &[&["bash", "-c", "ls"], &["ls"]],
        &[L],
    ),
    ("PATH=.:$PATH ls", &[&["ls"]], &[L]),
    ("FOO=bar BAZ=\"q x\" make test", &[&["make", "test"]], &[E]),
    // ---- environment variables: an allow-list of inert ones, anything else asks -----
    (
        "GIT_PAGER=\"touch /tmp/pwn\" git log",
        &[&["git", "log"]],
        &[E],
    ),
    (
        "PYTHONPATH=/tmp/evil python3 -m json.tool f",
        &[&["python3", "-m", "json.tool", "f"]],
        &[E],
    ),
    ("HOME=/tmp/x git status", &[&["git", "status"]], &[E]),
    (
        "EDITOR=vi VISUAL=vi git commit",
        &[&["git", "commit"]],
        &[E],
    ),
    ("http_proxy=http://p:3128 curl x", &[&["curl", "x"]], &[E]),
    ("GCONV_PATH=/tmp iconv f", &[&["iconv", "f"]], &[L]),
    ("GLIBC_TUNABLES=x ls", &[&["ls"]], &[L]),
    (
        "env GIT_SSH_COMMAND=x git push",
        &[
            &["env", "GIT_SSH_COMMAND=x", "git", "push"],
            &["git", "push"],
        ],
        &[E],
    ),
    (
        "env -u GIT_DIR LC_ALL=C git push",
        &[
            &["env", "-u", "GIT_DIR", "LC_ALL=C", "git", "push"],
            &["git", "push"],
        ],
        &[],
    ),
    (
        "sudo PAGER=x man ls",
        &[&["sudo", "PAGER=x", "man", "ls"], &["man", "ls"]],
        &[E],
    ),
    (
        "export NODE_OPTIONS=--require=x; node a.js",
        &[&["export", "NODE_OPTIONS=--require=x"], &["node", "a.js"]],
        &[E],
    ),
    (
        "export GIT_DIR; git log",
        &[&["export", "GIT_DIR"], &["git", "log"]],
        &[E],
    ),
    ("export lower=1", &[&["export", "lower=1"]], &[E]),
    (
        "export LANG=C.UTF-8 TZ=UTC",
        &[&["export", "LANG=C.UTF-8", "TZ=UTC"]],
        &[],
    ),
    ("export -n EDITOR", &[&["export", "-n", "EDITOR"]], &[]),
    ("export -p", &[&["export", "-p"]], &[]),
    ("export -f f", &[&["export", "-f", "f"]], &[]),
    ("export \"$v\"", &[&["export", "\"$v\""]], &[E]),
    (
        "declare -x PERL5OPT=-Mx",
        &[&["declare", "-x", "PERL5OPT=-Mx"]],
        &[E],
    ),
    (
        "typeset -x RUBYOPT=-rx",
        &[&["typeset", "-x", "RUBYOPT=-rx"]],
        &[E],
    ),
    ("declare -gx v=1", &[&["declare", "-gx", "v=1"]], &[E]),
    ("declare -i n=1", &[&["declare", "-i", "n=1"]], &[]),
    ("local -x CC=evil", &[&["local", "-x", "CC=evil"]], &[E]),
    ("local RUSTFLAGS=x", &[&["local", "RUSTFLAGS=x"]], &[E]),
    ("local -n ref=PAGER", &[&["local", "-n", "ref=PAGER"]], &[E]),
    (
        "readonly XDG_CONFIG_HOME=/tmp",
        &[&["readonly", "XDG_CONFIG_HOME=/tmp"]],
        &[E],
    ),
    (
        "command export GIT_PAGER=x",
        &[
            &["command", "export", "GIT_PAGER=x"],
            &["export", "GIT_PAGER=x"],
        ],
        &[E],
    ),
    ("LANG=C sort f", &[&["sort", "f"]], &[]),
    (
        "LC_ALL=C TZ=UTC TERM=dumb NO_COLOR=1 COLUMNS=80 CI=1 date",
        &[&["date"]],
        &[],
    ),
    (
        "RUST_BACKTRACE=1 RUST_LOG=debug CARGO_TERM_COLOR=never cargo test",
        &[&["cargo", "test"]],
        &[],
    ),
    (
        "PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 python3 t.py",
        &[&["python3", "t.py"]],
        &[],
    ),
    ("x=1; echo $x", &[&["echo", "$x"]], &[]),
    (
        "dir=$(pwd); ls \"$dir\"",
        &[&["pwd"], &["ls", "\"$dir\""]],
        &[],
    ),
    ("HOME=/tmp/x; git log", &[&["git", "log"]], &[E]),
    ("LANG=C; sort f", &[&["sort", "f"]], &[]),
    (
        "set -a; x=1; node a.js",
        &[&["set", "-a"], &["node", "a.js"]],
        &[E],
    ),
    ("set -o allexport", &[&["set", "-o", "allexport"]], &[E]),
    ("set -euo pipefail", &[&["set", "-euo", "pipefail"]], &[]),
    ("set -- a b", &[&["set", "--", "a", "b"]], &[]),
    (
        "bash -ac 'x=1; ls'",
        &[&["bash", "-ac", "x=1; ls"], &["ls"]],
        &[E],
    ),
    ("[[ 'a[$(id)]' -eq 1 ]]", &[], &[O]),
    ("let 'x=a[$(id)]'", &[&["let", "x=a[$(id)]"]], &[O]),
    // ---- variables assigned without an `=` word: checked as `NAME=value` would be -------
    (
        "read -r HOME; git log",
        &[&["read", "-r", "HOME"], &["git", "log"]],
        &[E],
    ),
    ("read -a PATH < f", &[&["read", "-a", "PATH"]], &[L]),
    (
        "read -p \"dir: \" GIT_DIR",
        &[&["read", "-p", "dir: ", "GIT_DIR"]],
        &[E],
    ),
    (
        "read -rt 5 x EDITOR",
        &[&["read", "-rt", "5", "x", "EDITOR"]],
        &[E],
    ),
    // The name may also have a subscript that runs code (`name='a[$(cmd)]'`).
    (
        "read -r \"$name\"",
        &[&["read", "-r", "\"$name\""]],
        &[E, O],
    ),
    (
        "command read GIT_SSH_COMMAND",
        &[
            &["command", "read", "GIT_SSH_COMMAND"],
            &["read", "GIT_SSH_COMMAND"],
        ],
        &[E],
    ),
    (
        "bash -c 'read -r HOME; git log'",
        &[
            &["bash", "-c", "read -r HOME; git log"],
            &["read", "-r", "HOME"],
            &["git", "log"],
        ],
        &[E],
    ),
    (
        "printf -v HOME %s /tmp/x; git log",
        &[&["printf", "-v", "HOME", "%s", "/tmp/x"], &["git", "log"]],
        &[E],
    ),
    (
        "printf -vPATH %s /tmp",
        &[&["printf", "-vPATH", "%s", "/tmp"]],
        &[L],
    ),
    // `f='-va[$(cmd)]'` runs code too.
    (
        "printf \"$f\" HOME x",
        &[&["printf", "\"$f\"", "HOME", "x"]],
        &[E, O],
    ),
    (
        "for HOME in /tmp/x; do git log; done",
        &[&["git", "log"]],
        &[E],
    ),
    ("for PATH in /tmp/evil; do ls; done", &[&["ls"]], &[L]),
    (
        "select EDITOR in vi nano; do git commit; done",
        &[&["git", "commit"]],
        &[E],
    ),
    (
        "mapfile -t GIT_DIR < f",
        &[&["mapfile", "-t", "GIT_DIR"]],
        &[E],
    ),
    ("readarray PATH < f", &[&["readarray", "PATH"]], &[L]),
    ("getopts ab: EDITOR", &[&["getopts", "ab:", "EDITOR"]], &[E]),
    ("let HOME=1", &[&["let", "HOME=1"]], &[E]),
    ("let 'PATH = 1'", &[&["let", "PATH = 1"]], &[L]),
    ("(( HOME = 1 ))", &[], &[E]),
    ("(( x = y = HOME = 3 ))", &[], &[E]),
    ("(( ++EDITOR ))", &[], &[O, E]),
    ("(( $v = 1 ))", &[], &[O, E]),
    (
        "echo $(( HOME += 1 ))",
        &[&["echo", "$(( HOME += 1 ))"]],
        &[O, E],
    ),
    ("for ((; HOME++ < 3 ;)); do :; done", &[&[":"]], &[O, E]),
    ("a[HOME=1]=x", &[], &[E]),
    (
        "echo \"${a[PAGER=1]}\"",
        &[&["echo", "\"${a[PAGER=1]}\""]],
        &[E],
    ),
    ("[[ HOME=7 -eq 7 ]]", &[], &[E]),
    // The common cases stay silent: lower-case names, inert variables, the shell's own.
    ("read -r line", &[&["read", "-r", "line"]], &[]),
    ("read -r", &[&["read", "-r"]], &[]),
    (
        "while IFS= read -r line; do wc -l \"$line\"; done < f",
        &[&["read", "-r", "line"], &["wc", "-l", "\"$line\""]],
        &[],
    ),
    (
        "printf -v out %s x",
        &[&["printf", "-v", "out", "%s", "x"]],
        &[],
    ),
    (
        "printf '%s\\n' \"$x\"",
        &[&["printf", "%s\\n", "\"$x\""]],
        &[],
    ),
    (
        "printf \"Hello $name\"",
        &[&["printf", "\"Hello $name\""]],
        &[],
    ),
    (
        "for f in *.rs; do wc -l \"$f\"; done",
        &[&["wc", "-l", "\"$f\""]],
        &[],
    ),
    (
        "for LANG in C POSIX; do sort f; done",
        &[&["sort", "f"]],
        &[],
    ),
    ("mapfile -t lines < f", &[&["mapfile", "-t", "lines"]], &[]),
    ("mapfile < f", &[&["mapfile"]], &[]),
    ("getopts ab: opt", &[&["getopts", "ab:", "opt"]], &[]),
    ("OPTIND=1; REPLY=x", &[], &[]),
    ("let i++ 'n += 2'", &[&["let", "i++", "n += 2"]], &[O]),
    ("(( i++, n == 2 ))", &[], &[O]),
    (
        "for ((i = 0; i < 3; i++)); do echo $i; done",
        &[&["echo", "$i"]],
        &[],
    ),
    ("[[ $x == PATH=* ]]", &[], &[]),
    ("unset HOME PATH", &[&["unset", "HOME", "PATH"]], &[]),
    ("local HOME", &[&["local", "HOME"]], &[]),
    ("typeset HOME=/tmp/x", &[&["typeset", "HOME=/tmp/x"]], &[E]),
    // Lower-case variables that programs read from the environment (and that are exported
    // where they are set): `<scheme>_proxy`, npm's configuration.
    ("http_proxy=http://evil; curl x", &[&["curl", "x"]], &[E]),
    (
        "https_proxy=http://evil; git fetch",
        &[&["git", "fetch"]],
        &[E],
    ),
    (
        "no_proxy='*'; pip install x",
        &[&["pip", "install", "x"]],
        &[E],
    ),
    ("all_proxy=socks5://e; wget y", &[&["wget", "y"]], &[E, W]),
    (
        "npm_config_script_shell=/tmp/sh; npm run build",
        &[&["npm", "run", "build"]],
        &[E],
    ),
    ("proxy=x; curl y", &[&["curl", "y"]], &[]),
    // ---- does not parse / fails closed --------------------------------------------
    ("ls &&", &[&["ls"]], &[U]),
    ("echo 'unterminated", &[&["echo"]], &[U]),
    ("if true; then", &[&["true"]], &[U]),
    ("rm x )", &[&["rm", "x"]], &[U]),
    ("ls <> f", &[&["ls"]], &[U, W]),
    ("X=a\\\nb cmd", &[&["b", "cmd"]], &[U, E]),
    ("ls\\\r\nrm -rf /", &[], &[U]),
    (
        "echo $'\\\\'; rm -rf x # '",
        &[&["echo", "\\'; rm -rf x # "]],
        &[U],
    ),
    (
        "echo ${x#$(rm a)}",
        &[&["echo", "${x#$(rm a)}"], &["rm", "a"]],
        &[U],
    ),
    (
        "echo ${x:-`rm o`}",
        &[&["echo", "${x:-`rm o`}"], &["rm", "o"]],
        &[U],
    ),
    ("echo \\ #x; rm r", &[&["echo"]], &[U]),
    (
        "echo `echo \\`rm x\\``",
        &[
            &["echo", "`echo \\`rm x\\``"],
            &["echo", "`rm x`"],
            &["rm", "x"],
        ],
        &[],
    ),
    ("ls >\nrm x", &[&["ls"]], &[U, W]),
    ("printf '%s' \\ x", &[&["printf", "%s", "x"]], &[U]),
    ("ls; \\ rm x", &[&["ls"], &["rm", "x"]], &[U]),
    ("echo a\\ b\\ c", &[&["echo", "a b c"]], &[]),
    (
        "time { rm x; }",
        &[
            &["time", "{", "rm", "x"],
            &["{", "rm", "x"],
            &["rm", "x"],
            &["}"],
        ],
        &[U],
    ),
    ("! ! rm x", &[&["rm", "x"]], &[]),
    (
        "cat <<-EOF\n\t$(rm x)\n\tEOF",
        &[&["cat"], &["rm", "x"]],
        &[],
    ),
    ("ls\0rm", &[], &[U]),
    (
        "sudo -h host rm x",
        &[&["sudo", "-h", "host", "rm", "x"]],
        &[U],
    ),
    (
        "timeout --frobnicate 5 rm x",
        &[&["timeout", "--frobnicate", "5", "rm", "x"]],
        &[U],
    ),
    ("env -S 'rm \\q' x", &[&["env", "-S", "rm \\q", "x"]], &[U]),
    // ---- benign look-alikes -------------------------------------------------------
    (
        "echo sudo rm -rf /",
        &[&["echo", "sudo", "rm", "-rf", "/"]],
        &[],
    ),
    ("grep -r 'rm -rf' .", &[&["grep", "-r", "rm -rf", "."]], &[]),
    (
        "git commit -m 'eval $(foo)'",
        &[&["git", "commit", "-m", "eval $(foo)"]],
        &[],
    ),
    (
        "printf '%s\\n' '$(rm x)'",
        &[&["printf", "%s\\n", "$(rm x)"]],
        &[],
    ),
    ("echo \"\\$(rm x)\"", &[&["echo", "$(rm x)"]], &[]),
    (
        "ls --sort=time -- -rf",
        &[&["ls", "--sort=time", "--", "-rf"]],
        &[],
    ),
    (
        "cargo test -p cordon-tools -- --nocapture",
        &[&["cargo", "test", "-p", "cordon-tools", "--", "--nocapture"]],
        &[],
    ),
    ("npm run test:unit", &[&["npm", "run", "test:unit"]], &[]),
    (
        "git log --format='%H %s' | head -5",
        &[&["git", "log", "--format=%H %s"], &["head", "-5"]],
        &[],
    ),
    (
        "echo env sudo xargs",
        &[&["echo", "env", "sudo", "xargs"]],
        &[],
    ),
    (
        "cat file | grep -v '^#' | sort -u",
        &[&["cat", "file"], &["grep", "-v", "^#"], &["sort", "-u"]],
        &[],
    ),
    (
        "mkdir -p build && cd build && cmake ..",
        &[
            &["mkdir", "-p", "build"],
            &["cd", "build"],
            &["cmake", ".."],
        ],
        &[W],
    ),
    (
        "python3 -c 'import os; os.remove(\"x\")'",
        &[&["python3", "-c", "import os; os.remove(\"x\")"]],
        &[],
    ),
    (
        "find . -name '*.rs' | wc -l",
        &[&["find", ".", "-name", "*.rs"], &["wc", "-l"]],
        &[],
    ),
    ("echo '`rm x`' \"'\"", &[&["echo", "`rm x`", "'"]], &[]),
    ("test -f Cargo.toml", &[&["test", "-f", "Cargo.toml"]], &[]),
    // ---- code in subscripts bash evaluates from strings ----------------------------
    (
        "printf -v 'a[$(git reset --hard HEAD~1 >&2)]' x",
        &[&["printf", "-v", "a[$(git reset --hard HEAD~1 >&2)]", "x"]],
        &[O],
    ),
    (
        "read 'a[$(rm -rf x)]'",
        &[&["read", "a[$(rm -rf x)]"]],
        &[O],
    ),
    ("read -r 'a[`rm x`]'", &[&["read", "-r", "a[`rm x`]"]], &[O]),
    ("read \"a[\\$(rm x)]\"", &[&["read", "a[$(rm x)]"]], &[O]),
    // A plain `$i`: its value is evaluated as arithmetic, and may be `x[$(cmd)]`.
    ("read -r 'a[$i]'", &[&["read", "-r", "a[$i]"]], &[O]),
    ("read 'a[${i}]'", &[&["read", "a[${i}]"]], &[O]),
    ("read \"a[$i]\"", &[&["read", "\"a[$i]\""]], &[E, O]),
    ("read 'a[i]' 'b[0]'", &[&["read", "a[i]", "b[0]"]], &[]),
    ("read 'a[GIT_DIR=1]'", &[&["read", "a[GIT_DIR=1]"]], &[E]),
    ("read \"a[PATH=1]\"", &[&["read", "a[PATH=1]"]], &[L]),
    (
        "mapfile -t 'a[$(rm x)]' < f",
        &[&["mapfile", "-t", "a[$(rm x)]"]],
        &[O],
    ),
    (
        "getopts ab 'o[$(rm x)]'",
        &[&["getopts", "ab", "o[$(rm x)]"]],
        &[O],
    ),
    (
        "printf \"$fmt\" 'a[$(rm x)]' y",
        &[&["printf", "\"$fmt\"", "a[$(rm x)]", "y"]],
        &[E, O],
    ),
    (
        "declare 'a[$(rm x)]=1'",
        &[&["declare", "a[$(rm x)]=1"]],
        &[O],
    ),
    ("local 'a[$(rm x)]'", &[&["local", "a[$(rm x)]"]], &[O]),
    (
        "declare 'a[GIT_DIR=1]=x'",
        &[&["declare", "a[GIT_DIR=1]=x"]],
        &[E],
    ),
    // The value of a declaration is not evaluated; a visible `$i` is as in `a[$i]=1`.
    ("declare 'x=$(rm x)'", &[&["declare", "x=$(rm x)"]], &[]),
    ("declare a[$i]=1", &[&["declare", "a[$i]=1"]], &[O]),
    (
        "declare a[i]=1 'b[0]=2'",
        &[&["declare", "a[i]=1", "b[0]=2"]],
        &[O],
    ),
    ("let 'a[$(rm x)]=1'", &[&["let", "a[$(rm x)]=1"]], &[O]),
    ("let 'a[$i]=1'", &[&["let", "a[$i]=1"]], &[O]),
    ("let 'x = y + 1' i++", &[&["let", "x = y + 1", "i++"]], &[O]),
    ("[[ 1 -eq 'a[$(rm x)]' ]]", &[], &[O]),
    ("[[ 1 -eq 'a[$i]' ]]", &[], &[O]),
    ("[[ \"a[\\$i]\" -lt 2 ]]", &[], &[O]),
    ("[[ $x -eq 'a[i]' ]]", &[], &[O]),
    ("[[ 1 -eq 'a[GIT_DIR=1]' ]]", &[], &[O, E]),
    ("unset 'a[$(rm x)]'", &[&["unset", "a[$(rm x)]"]], &[O]),
    ("unset 'a[1]' b", &[&["unset", "a[1]", "b"]], &[]),
    ("unset -f 'f'", &[&["unset", "-f", "f"]], &[]),
    // Parsed by tree-sitter: the substitution is a command, checked as one.
    ("a[$i]=x", &[], &[O]),
    ("a[$(rm x)]=1", &[&["rm", "x"]], &[O]),
    // ---- named file descriptors assign their variable -------------------------------
    (
        "exec {PATH}>/dev/null; git status",
        &[&["exec", "{PATH}"], &["{PATH}"], &["git", "status"]],
        &[L],
    ),
    (
        "exec {GIT_DIR}<&-",
        &[&["exec", "{GIT_DIR}"], &["{GIT_DIR}"]],
        &[E],
    ),
    (
        "exec {fd}<&- {HOME}>&2",
        &[&["exec", "{fd}"], &["{fd}"]],
        &[E],
    ),
    ("exec {fd}>/dev/null", &[&["exec", "{fd}"], &["{fd}"]], &[]),
    ("echo {HOME} > /dev/null", &[&["echo", "{HOME}"]], &[]),
];

#[test]
fn table() {
    assert!(CASES.len() >= 150, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for (line, cmds, kinds) in CASES {
        let parsed = parse(line);
        // The commands bash runs: not the readings made for the rules (`rm`'s canonical ones,
        // tested in bypass.rs).
        let got_cmds: Vec<Vec<&str>> = parsed
            .commands
            .iter()
            .filter(|c| !c.reading)
            .map(|c| c.words.iter().map(String::as_str).collect())
            .collect();
        let want_cmds: Vec<Vec<&str>> = cmds.iter().map(|c| c.to_vec()).collect();
        let mut got_kinds: Vec<K> = parsed.concerns.iter().map(kind).collect();
        got_kinds.sort();
        got_kinds.dedup();
        let mut want_kinds = kinds.to_vec();
        want_kinds.sort();
        if got_cmds != want_cmds || got_kinds != want_kinds {
            failures.push(format!(
                "{line:?}\n   want {want_cmds:?} {want_kinds:?}\n   got  {got_cmds:?} {got_kinds:?}\n   concerns {:?}",
                parsed.concerns
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

// ---- payloads of concerns ------------------------------------------------------------

#[test]
fn concern_payloads() {
    assert_eq!(
        parse("ls > out.txt 2>> \"my log\"").concerns,
        [
            Concern::WriteRedirect("out.txt".into()),
            Concern::WriteRedirect("my log".into())
        ]
    );
    assert_eq!(
        parse("ls > $OUT").concerns,
        [Concern::WriteRedirect("$OUT".into())]
    );
    assert_eq!(
        parse("LD_PRELOAD=/x.so ls").concerns,
        [Concern::LoaderVariable("LD_PRELOAD=/x.so".into())]
    );
    assert_eq!(
        parse("$CMD -rf /").concerns,
        [Concern::DynamicCommand("$CMD".into())]
    );
    assert_eq!(
        parse("eval \"$x\"").concerns,
        [Concern::Opaque("eval \"$x\"".into())]
    );
    let p = parse("GIT_PAGER=\"touch /tmp/pwn\" git log");
    assert_eq!(
        p.concerns,
        [Concern::Environment("GIT_PAGER=\"touch /tmp/pwn\"".into())]
    );
    assert_eq!(p.concerns[0].kind(), "environment");
    assert_eq!(p.concerns[0].variable(), Some("GIT_PAGER"));
    let shown = p.concerns[0].to_string();
    assert!(
        shown.contains("`GIT_PAGER`") && shown.contains("may change what the program runs"),
        "{shown}"
    );
    assert_eq!(
        parse("export NODE_OPTIONS").concerns,
        [Concern::Environment("NODE_OPTIONS".into())]
    );
    assert_eq!(
        parse("export LD_PRELOAD=/x.so; sudo -E ls").concerns,
        [Concern::LoaderVariable("LD_PRELOAD=/x.so".into())],
        "a loader variable keeps its own kind"
    );
    assert_eq!(
        Concern::LoaderVariable("LD_PRELOAD=/x.so".into()).kind(),
        "loader-variable"
    );
    let p = parse("set -a");
    assert_eq!(p.concerns, [Concern::Environment("set -a".into())]);
    assert_eq!(p.concerns[0].variable(), None);
    // Assigned without an `=` word: the detail is the name, so the variable is known.
    for (line, want) in [
        ("read -r HOME", Concern::Environment("HOME".into())),
        (
            "for PATH in /x; do ls; done",
            Concern::LoaderVariable("PATH".into()),
        ),
        ("(( GIT_DIR = 1 ))", Concern::Environment("GIT_DIR".into())),
        (
            "read -r 'EDITOR[0]'",
            Concern::Environment("EDITOR[0]".into()),
        ),
    ] {
        let p = parse(line);
        assert_eq!(p.concerns, [want], "{line}");
        assert!(p.concerns[0].variable().is_some(), "{line}");
    }
    assert_eq!(
        parse("read -r \"$name\"").concerns,
        [
            Concern::Environment("read -r \"$name\"".into()),
            Concern::Opaque("read -r \"$name\"".into())
        ]
    );
    assert_eq!(
        parse("(( $v = 1 ))").concerns,
        [
            Concern::Environment("$v".into()),
            Concern::Opaque(
                "(( $v = 1 )): evaluates the value of `v` as code, and it is not known to be a plain number"
                    .into()
            )
        ]
    );
    assert_eq!(
        parse("printf \"$f\" HOME x").concerns,
        [
            Concern::Environment("printf \"$f\" HOME x".into()),
            Concern::Opaque("printf \"$f\" HOME x".into())
        ]
    );
    // One concern for one assignment in a c-style `for` header.
    assert_eq!(
        parse("for ((I = 0; I < 3; I++)); do :; done").concerns,
        [Concern::Environment("I".into())]
    );
    assert!(is_inert_variable("IFS"));
    assert!(is_inert_variable("LC_ALL") && is_inert_variable("TERM"));
    for name in [
        "GIT_PAGER",
        "PAGER",
        "EDITOR",
        "HOME",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "CC",
    ] {
        assert!(!is_inert_variable(name), "{name}");
    }
    // One definition of the loader variables: the policy's (the sandbox's scrub) and the
    // shell's own start-up hooks.
    for name in ["LD_PRELOAD", "GLIBC_TUNABLES", "TMPDIR", "GCONV_PATH"] {
        assert!(cordon_policy::is_loader_variable(name) && is_hook_variable(name));
    }
    for name in ["PATH", "BASH_ENV", "PS4", "BASH_FUNC_ls%%"] {
        assert!(is_hook_variable(name), "{name}");
    }
    let p = parse("ls &&");
    assert!(!p.is_parsed());
    assert!(
        p.concerns[0].detail().contains("missing"),
        "{:?}",
        p.concerns
    );
    assert_eq!(Concern::Opaque("x".into()).kind(), "opaque");
}

#[test]
fn arithmetic_assignment_targets() {
    let targets = |expr: &str| -> Vec<(String, bool)> {
        words::arithmetic_targets(expr)
            .into_iter()
            .map(|w| (w.text, w.literal))
            .collect()
    };
    let names = |list: &[&str]| -> Vec<(String, bool)> {
        list.iter().map(|n| (n.to_string(), true)).collect()
    };
    for (expr, want) in [
        ("HOME = 1", names(&["HOME"])),
        ("HOME=1", names(&["HOME"])),
        ("x = y = HOME = 3", names(&["x", "y", "HOME"])),
        (
            "a += 1, b -= 1, c *= 2, d /= 2, e %= 2",
            names(&["a", "b", "c", "d", "e"]),
        ),
        (
            "f <<= 1, g >>= 1, h &= 1, i ^= 1, j |= 1",
            names(&["f", "g", "h", "i", "j"]),
        ),
        ("i++ + --j", names(&["i", "j"])),
        ("a+++b", names(&["a"])),
        ("a[HOME = 1] = 2", names(&["a", "HOME"])),
        ("\"HOME\" = 4", names(&["HOME"])),
        ("a == b, a != b, a <= b, a >= b, a < b", names(&[])),
        ("16#ff + 2#1_0 + 64#@_", names(&[])),
        ("$(echo HOME=1) + 1", names(&[])),
        ("$((HOME = 1))", names(&["HOME"])),
        ("é = 1, $é", names(&[])),
        ("", names(&[])),
        ("((((", names(&[])),
        ("a[[[", names(&[])),
    ] {
        assert_eq!(targets(expr), want, "{expr:?}");
    }
    assert_eq!(
        targets("$v = 1, ${w} += 1, ++$x"),
        [
            ("$v".to_string(), false),
            ("${w}".to_string(), false),
            ("$x".to_string(), false)
        ]
    );
}

/// Which variables the shell inherited decides whether one assigned without being exported
/// reaches a program: guessed from its name ([`Inherited::Unknown`]) or known
/// ([`Inherited::Exactly`], the sandbox's scrubbed environment). Exports and prefix
/// assignments are judged the same either way.
#[test]
fn inherited_variables() {
    // (GOPATH: inherited through `sandbox.env`, and changes no option the analysis reads;
    // an inherited `GIT_DIR` makes every line ask: bypass.rs
    // `an_inherited_variable_that_changes_a_modelled_program_asks`.)
    let exact = Inherited::exactly(["PATH", "HOME", "LANG", "GOPATH"]);
    // (line, kinds with Unknown, kinds with Exactly)
    let cases: &[(&str, &[K], &[K])] = &[
        ("for FILE in *.py; do echo \"$FILE\"; done", &[E], &[]),
        ("for PKG in a b; do echo $PKG; done", &[E], &[]),
        ("read -r VERSION < VERSION", &[E], &[]),
        ("while read -r NAME VALUE; do :; done < f", &[E], &[]),
        ("while getopts v OPT; do :; done", &[E], &[]),
        ("printf -v OUT '%s' x", &[E], &[]),
        // Arithmetic reads COUNT's value, which is not known (class 2 of issue 13).
        ("(( COUNT += 1 ))", &[E, O], &[O]),
        ("VERSION=1; echo $VERSION", &[E], &[]),
        ("declare VERSION=1", &[E], &[]),
        ("exec {FD}>/dev/null", &[E], &[]),
        ("read 'a[COUNT=1]'", &[E], &[]),
        ("for _ in 1 2; do :; done", &[E], &[]),
        ("http_proxy=http://x; curl y", &[E], &[]),
        ("npm_config_registry=x; npm ci", &[E], &[]),
        ("bash -c 'read -r VERSION < VERSION'", &[E], &[]),
        // Inherited, or exported by the shell itself.
        ("HOME=/tmp/x; git log", &[E], &[E]),
        ("read -r HOME", &[E], &[E]),
        ("for GOPATH in a; do go build; done", &[E], &[E]),
        ("read 'a[GOPATH=1]'", &[E], &[E]),
        ("PWD=/; git log", &[E], &[E]),
        ("cd /; OLDPWD=/x", &[E], &[E]),
        ("SHLVL=9; git log", &[E], &[E]),
        ("exec {HOME}>/dev/null", &[E], &[E]),
        // Inert, whether inherited or not.
        ("LANG=C; sort f", &[], &[]),
        // Loader variables, wherever they are set.
        ("LD_PRELOAD=/x.so; ls", &[L], &[L]),
        ("for PATH in a; do ls; done", &[L], &[L]),
        ("read BASH_ENV", &[L], &[L]),
        // Exported or in a command's environment: any name that is not inert.
        ("FILE=1 make", &[E], &[E]),
        ("export FILE=1", &[E], &[E]),
        ("export FILE", &[E], &[E]),
        ("declare -x FILE=1", &[E], &[E]),
        ("env FILE=1 make", &[E], &[E]),
        ("set -a; FILE=1", &[E], &[E]),
        ("read \"$name\"", &[E, O], &[E, O]),
        // Lower-case names that are neither inherited nor exported.
        ("for f in *.rs; do echo $f; done", &[], &[]),
        ("while IFS= read -r line; do :; done", &[], &[]),
    ];
    let kinds = |p: &ParsedLine| {
        let mut k: Vec<K> = p.concerns.iter().map(kind).collect();
        k.sort();
        k.dedup();
        k
    };
    let sorted = |k: &[K]| {
        let mut k = k.to_vec();
        k.sort();
        k
    };
    let mut failures = Vec::new();
    for (line, unknown, exactly) in cases {
        let guessed = parse(line);
        let known = parse_in(line, &exact);
        assert_eq!(guessed, parse_in(line, &Inherited::Unknown), "{line:?}");
        assert_eq!(known.commands, guessed.commands, "{line:?}");
        if kinds(&guessed) != sorted(unknown) || kinds(&known) != sorted(exactly) {
            failures.push(format!(
                "{line:?}\n   want {unknown:?} / {exactly:?}\n   got  {:?} / {:?}",
                guessed.concerns, known.concerns
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The argv form, and the concern's detail.
    let argv = argv(&["bash", "-c", "read -r VERSION < VERSION; HOME=/x"]);
    assert_eq!(
        parse_argv(&argv).concerns,
        [
            Concern::Environment("VERSION".into()),
            Concern::Environment("HOME=/x".into())
        ]
    );
    assert_eq!(
        parse_argv_in(&argv, &exact).concerns,
        [Concern::Environment("HOME=/x".into())]
    );
    assert_eq!(Inherited::default(), Inherited::Unknown);
}

/// Every command this parser sees through (or whose code it cannot see) is refused by
/// "approve always". The refusal list lives in `cordon_approval::amend`, which must not depend
/// on this crate (this crate depends on it), so the two lists are kept apart and checked here.
#[test]
fn approve_always_refuses_what_the_parser_sees_through() {
    use cordon_approval::{Amendment, Error, Key};
    let wrappers: &[(&str, &[&str])] = &[
        ("env", &["ls"]),
        ("sudo", &["ls"]),
        ("doas", &["ls"]),
        ("timeout", &["5", "ls"]),
        ("gtimeout", &["5", "ls"]),
        ("nice", &["ls"]),
        ("nohup", &["ls"]),
        ("setsid", &["ls"]),
        ("unbuffer", &["ls"]),
        ("catchsegv", &["ls"]),
        ("coproc", &["ls"]),
        ("builtin", &["ls"]),
        ("busybox", &["ls"]),
        ("command", &["ls"]),
        ("exec", &["ls"]),
        ("stdbuf", &["ls"]),
        ("time", &["ls"]),
        ("ionice", &["ls"]),
        ("chrt", &["1", "ls"]),
        ("taskset", &["1", "ls"]),
        ("chroot", &["/r", "ls"]),
        ("strace", &["ls"]),
        ("ltrace", &["ls"]),
        ("pkexec", &["ls"]),
        ("caffeinate", &["ls"]),
        ("fakeroot", &["ls"]),
        ("proxychains", &["ls"]),
        ("proxychains4", &["ls"]),
        ("xargs", &["ls"]),
        ("find", &[".", "-exec", "ls", ";"]),
        ("watch", &["ls"]),
        ("flock", &["f", "ls"]),
        ("script", &["-c", "ls"]),
        ("su", &["-c", "ls"]),
        ("runuser", &["-c", "ls"]),
        ("sg", &["wheel", "ls"]),
        ("eval", &["ls"]),
        ("source", &["f"]),
        (".", &["f"]),
        ("trap", &["ls", "EXIT"]),
    ];
    let shells = wrappers::SHELLS.iter().chain(wrappers::FOREIGN_SHELLS);
    let all = wrappers
        .iter()
        .map(|(name, args)| (*name, *args))
        .chain(shells.map(|name| (*name, &["-c", "ls"][..])));
    for (name, args) in all {
        let words: Vec<Word> = args.iter().map(|a| Word::lit(a)).collect();
        let out = wrappers::analyse(name, &words, name, &Inherited::Unknown);
        assert!(
            !out.inner.is_empty() || !out.concerns.is_empty(),
            "{name} is not seen through"
        );
        let key = Key::new(std::iter::once(name).chain(args.iter().copied()));
        assert!(
            matches!(
                Amendment::for_key("shell", &key),
                Err(Error::Interpreter { .. })
            ),
            "`{name}` can be approved always"
        );
    }
}

#[test]
fn command_text_is_the_source() {
    let p = parse("ls -la  &&  sudo  r''m x");
    let texts: Vec<&str> = p.commands.iter().map(|c| c.text.as_str()).collect();
    // The last is rm's reading for the rules (`rm /…/x`), with its command's text.
    assert_eq!(texts, ["ls -la", "sudo  r''m x", "r''m x", "r''m x"]);
}

// ---- argv form ---------------------------------------------------------------------------

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn argv_form() {
    let words = |p: &ParsedLine| -> Vec<Vec<String>> {
        p.commands.iter().map(|c| c.words.clone()).collect()
    };
    // Words are not parsed: quotes, `$`, `;` and globs are plain characters.
    let p = parse_argv(&argv(&["echo", "$(rm x); ls", "*"]));
    assert_eq!(words(&p), [argv(&["echo", "$(rm x); ls", "*"])]);
    assert!(p.concerns.is_empty());
    // `X=1` is the program name when there is no shell.
    let p = parse_argv(&argv(&["X=1", "ls"]));
    assert_eq!(words(&p), [argv(&["X=1", "ls"])]);
    // Wrappers are seen through and shell strings parsed.
    let p = parse_argv(&argv(&[
        "sudo",
        "-u",
        "root",
        "bash",
        "-lc",
        "ls && rm -rf /",
    ]));
    assert_eq!(
        words(&p),
        [
            argv(&["sudo", "-u", "root", "bash", "-lc", "ls && rm -rf /"]),
            argv(&["bash", "-lc", "ls && rm -rf /"]),
            argv(&["ls"]),
            argv(&["rm", "-rf", "/"]),
        ]
    );
    let p = parse_argv(&argv(&["env", "LD_PRELOAD=/x.so", "sh", "-c", "ls >f"]));
    assert_eq!(
        p.concerns,
        [
            Concern::LoaderVariable("LD_PRELOAD=/x.so".into()),
            Concern::WriteRedirect("f".into())
        ]
    );
    let p = parse_argv(&argv(&["find", ".", "-exec", "rm", "{}", ";"]));
    assert_eq!(words(&p)[1], argv(&["rm", "{found}"]));
    let p = parse_argv(&argv(&["bash", "-c", "if"]));
    assert!(!p.is_parsed());
    assert!(!parse_argv(&argv(&["ls", "a\0b"])).is_parsed());
    assert_eq!(parse_argv(&[]), ParsedLine::default());
    // Display text quotes what needs quoting.
    let p = parse_argv(&argv(&["echo", "a b", "it's"]));
    assert_eq!(p.commands[0].text, r"echo 'a b' 'it'\''s'");
}

// ---- limits ------------------------------------------------------------------------------

fn has_unparsed(p: &ParsedLine) -> bool {
    p.concerns.iter().any(|c| matches!(c, Concern::Unparsed(_)))
}

#[test]
fn limits_fail_closed() {
    // Too long.
    let long = format!("ls {}", "a".repeat(MAX_LINE_BYTES));
    assert!(has_unparsed(&parse(&long)));
    // Shell strings nested deeper than the limit.
    let mut line = "rm x".to_string();
    for _ in 0..12 {
        line = format!("sh -c {}", words::quote(&line));
    }
    let p = parse(&line);
    assert!(has_unparsed(&p), "{:?}", p.concerns);
    // ... but 8 levels are followed.
    let mut line = "rm x".to_string();
    for _ in 0..MAX_SHELL_DEPTH {
        line = format!("sh -c {}", words::quote(&line));
    }
    let p = parse(&line);
    assert!(p.is_parsed(), "{:?}", p.concerns);
    assert_eq!(p.commands.last().unwrap().words, ["rm", "x"]);
    // Too many wrappers.
    let p = parse(&format!("{}rm x", "nice ".repeat(40)));
    assert!(has_unparsed(&p));
    // Deep syntax: no stack overflow, fails closed.
    for (open, close) in [
        ("$(", ")"),
        ("(", ")"),
        ("{ ", "; }"),
        ("\"$(", ")\""),
        ("`", "`"),
    ] {
        let line = format!("{}ls{}", open.repeat(3000), close.repeat(3000));
        let p = parse(&line);
        assert!(has_unparsed(&p), "{open}: {:?}", p.concerns);
    }
    let p = parse(&"a && ".repeat(5000));
    assert!(has_unparsed(&p));
}

// ---- randomized robustness ------------------------------------------------------------------

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// `CORDON_FUZZ_ITERS=N` scales the randomized tests (default 1).
fn iters(base: usize) -> usize {
    std::env::var("CORDON_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(1)
        * base
}

fn seed() -> u64 {
    std::env::var("CORDON_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0de_1234_5678)
}

const TOKENS: &[&str] = &[
    "rm",
    "ls",
    "sudo",
    "env",
    "xargs",
    "find",
    "-exec",
    "\\;",
    "+",
    "{}",
    "bash",
    "sh",
    "-c",
    "-lc",
    "eval",
    "source",
    ".",
    "timeout",
    "5",
    "nice",
    "-n",
    "watch",
    "X=1",
    "LD_PRELOAD=x",
    "$X",
    "${X}",
    "$(",
    "`",
    ")",
    "(",
    "((",
    "))",
    "{",
    "}",
    "[[",
    "]]",
    "[",
    "]",
    ";",
    ";;",
    "&&",
    "||",
    "|",
    "&",
    "|&",
    "!",
    "\n",
    " ",
    "  ",
    "\t",
    "'",
    "\"",
    "$'",
    "\\",
    "\\\n",
    "#",
    ">",
    ">>",
    "<",
    "2>&1",
    "&>",
    "<<<",
    "<<EOF\n",
    "\nEOF\n",
    "<<'Q'\n",
    "\nQ\n",
    "<(",
    ">(",
    "if",
    "then",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "case",
    "esac",
    "function",
    "f()",
    "*",
    "?",
    "~",
    "=",
    "x",
    "\"rm x\"",
    "'rm'",
    "r''m",
    "\\rm",
    "$((",
    "1+2",
    "\r",
    "é",
    "\u{0}",
    "\u{a0}",
    "-",
    "--",
    "/dev/null",
    "$'\\x72m'",
    "{a,b}",
    "coproc",
    "time",
    "exec",
];

fn soup(rng: &mut Rng) -> String {
    let n = 1 + rng.below(30);
    let mut s = String::new();
    for _ in 0..n {
        let token = *rng.pick(TOKENS);
        s.push_str(token);
        if rng.below(3) == 0 {
            s.push(' ');
        }
    }
    s
}

fn random_chars(rng: &mut Rng) -> String {
    const ALPHABET: &[char] = &[
        'a', 'r', 'm', ' ', '\n', '\t', '$', '(', ')', '{', '}', '[', ']', '\'', '"', '`', '\\',
        ';', '&', '|', '<', '>', '#', '*', '?', '=', '!', '-', '~', '\r', '\u{0}', 'é', '→',
        '\u{2028}', '\u{feff}', '😀',
    ];
    let n = rng.below(120);
    (0..n).map(|_| *rng.pick(ALPHABET)).collect()
}

fn tree_has_error(line: &str) -> Option<bool> {
    if line.len() > MAX_LINE_BYTES || line.contains('\0') {
        return None;
    }
    parse_tree(line, Instant::now() + Duration::from_secs(5)).map(|t| t.root_node().has_error())
}

fn check_invariants(line: &str) {
    let parsed = parse(line);
    if tree_has_error(line) != Some(false) {
        assert!(
            has_unparsed(&parsed),
            "parse error without Unparsed for {line:?}: {parsed:?}"
        );
    }
    for c in &parsed.commands {
        assert!(!c.words.is_empty(), "empty command for {line:?}");
    }
    // The argv form must hold up too.
    let words: Vec<String> = line.split(' ').map(str::to_string).collect();
    let _ = parse_argv(&words);
}

#[test]
fn random_token_soups_never_panic_and_fail_closed() {
    let mut rng = Rng(seed());
    for _ in 0..iters(2500) {
        let line = soup(&mut rng);
        check_invariants(&line);
    }
}

#[test]
fn random_strings_never_panic_and_fail_closed() {
    let mut rng = Rng(seed() ^ 0xdead_beef);
    for _ in 0..iters(2500) {
        let line = random_chars(&mut rng);
        check_invariants(&line);
    }
}

/// A command appended on its own line is always found, whatever came before, unless
/// the line is reported as not understood. (Tokens that legitimately swallow the next
/// line — here-documents, open quotes, trailing backslashes, open constructs — either make
/// tree-sitter report an error or are excluded.)
#[test]
fn appended_command_is_found_or_line_is_unparsed() {
    const SAFE: &[&str] = &[
        "rm", "ls", "sudo", "env", "bash", "-c", "eval", "X=1", "$X", "${X}", "${X#", "${X:-",
        "$(", ")", "(", "((", "))", "{", "}", "[[", "]]", "[", "]", ";", "&&", "||", "|", "&", "!",
        " ", "'", "\"", "$'", "\\", "`", ">", "<", "<(", "2>&1", "if", "then", "else", "fi", "for",
        "in", "do", "done", "while", "case", "esac", ";;", "*", "x", "=", "#", "$((", "function",
        "f()", "time", "coproc", "select", "\t", "$\"", "\\'", "\\\"", "a=(", "[$(", "~", "{a,b}",
        "-", "--", "@(", "!(", "+(", "?(", "*(", "$[", "|&", ";&", ";;&", "<<<", ">|", "&>",
        "3>&-", "\r", "\u{a0}", "é",
    ];
    let mut rng = Rng(seed() ^ 0x1234);
    for _ in 0..iters(2000) {
        let n = 1 + rng.below(12);
        let mut s = String::new();
        for _ in 0..n {
            let token = *rng.pick(SAFE);
            s.push_str(token);
            if rng.below(2) == 0 {
                s.push(' ');
            }
        }
        if s.ends_with('\\') {
            // A line continuation: the marker is an argument, as in bash.
            continue;
        }
        let line = format!("{s}\nzzmarker arg\n");
        let parsed = parse(&line);
        let found = parsed
            .commands
            .iter()
            .any(|c| c.words.first().is_some_and(|w| w == "zzmarker"));
        // Inside an open quote the marker is data; tree-sitter reports the quote as
        // unterminated, so the line is unparsed.
        assert!(
            found || has_unparsed(&parsed),
            "marker lost without a concern in {line:?}: {parsed:?}"
        );
    }
}

/// Obfuscations of a command name resolve to the name.
#[test]
fn random_obfuscations_resolve() {
    let mut rng = Rng(seed() ^ 0x0bf);
    for _ in 0..iters(500) {
        let name = *rng.pick(&["rm", "sudo", "curl", "chmod", "git"]);
        let mut word = String::new();
        for c in name.chars() {
            match rng.below(7) {
                0 => word.push(c),
                1 => word.push_str(&format!("'{c}'")),
                2 => word.push_str(&format!("\"{c}\"")),
                3 => word.push_str(&format!("\\{c}")),
                4 => word.push_str(&format!("$'\\x{:02x}'", c as u32)),
                5 => word.push_str(&format!("{c}''")),
                _ => word.push_str(&format!("$'\\{:03o}'", c as u32)),
            }
        }
        let line = format!("{word} arg1 arg2");
        let parsed = parse(&line);
        assert_eq!(parsed.commands[0].words[0], name, "{line:?}");
        // (`chmod` writes its operands: judged where they lie.)
        assert!(
            parsed
                .concerns
                .iter()
                .all(|c| name == "chmod" && matches!(c, Concern::WriteRedirect(_))),
            "{line:?}: {:?}",
            parsed.concerns
        );
    }
}

/// Quote removal agrees with bash: random words of quoted and unquoted parts are given
/// to `printf` in a real bash and compared with the words found. Needs bash (CI has it).
#[test]
fn quote_removal_matches_bash() {
    use std::process::Command;
    if let Err(e) = Command::new("bash").arg("-c").arg("true").output() {
        panic!("cannot run bash ({e}): install it (Debian package `bash`); this test compares quote removal with it");
    }
    let mut rng = Rng(seed() ^ 0xba5);
    let printable: Vec<char> = (0x20u8..0x7f).map(char::from).collect();
    let plain: Vec<char> = "abcXYZ019-_./,:@%+=".chars().collect();
    let mut script = String::new();
    let mut expected: Vec<Vec<String>> = Vec::new();
    for _ in 0..150 {
        let nwords = 1 + rng.below(4);
        let mut line = String::from("printf '<%s>'");
        for _ in 0..nwords {
            line.push(' ');
            for _ in 0..1 + rng.below(4) {
                let len = rng.below(5);
                match rng.below(5) {
                    0 => {
                        let s: String = (0..len.max(1)).map(|_| *rng.pick(&plain)).collect();
                        line.push_str(&s);
                    }
                    1 => {
                        let s: String = (0..len)
                            .map(|_| *rng.pick(&printable))
                            .filter(|c| *c != '\'')
                            .collect();
                        line.push_str(&format!("'{s}'"));
                    }
                    2 => {
                        let mut s = String::new();
                        for _ in 0..len {
                            match *rng.pick(&printable) {
                                '$' | '`' | '!' => {}
                                '"' => s.push_str("\\\""),
                                '\\' if rng.below(2) == 0 => s.push_str("\\\\"),
                                '\\' => s.push_str("\\q"),
                                c => s.push(c),
                            }
                        }
                        line.push_str(&format!("\"{s}\""));
                    }
                    3 => {
                        let c = *rng.pick(&printable);
                        // `\<blank>` at the start of a word is a known parser
                        // disagreement, reported as unparsed (see the table).
                        if c != ' ' {
                            line.push('\\');
                            line.push(c);
                        }
                    }
                    _ => {
                        let esc = *rng.pick(&[
                            "\\n", "\\t", "\\x41", "\\101", "\\'", "\\u00e9", "A", "\\e", "\\cA",
                            "\\\"", "\\q",
                        ]);
                        line.push_str(&format!("$'{esc}'"));
                    }
                }
            }
        }
        let parsed = parse(&line);
        assert!(
            parsed.concerns.is_empty(),
            "{line:?}: {:?}",
            parsed.concerns
        );
        assert_eq!(parsed.commands.len(), 1, "{line:?}");
        expected.push(parsed.commands[0].words[2..].to_vec());
        script.push_str(&line);
        // Records end with 0x1f, which no generated word contains.
        script.push_str("; printf '\\037'\n");
    }
    let out = Command::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(&script)
        .env_clear()
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.split('\u{1f}').collect();
    let script_lines: Vec<&str> = script.lines().collect();
    for (i, want) in expected.iter().enumerate() {
        let ours: String = want.iter().map(|w| format!("<{w}>")).collect();
        assert_eq!(lines[i], ours, "line {:?}", script_lines[i]);
    }
}

/// A command substitution is found, or the line is unparsed, in every context where bash
/// performs it.
#[test]
fn substitutions_in_every_context() {
    const CONTEXTS: &[&str] = &[
        "echo S",
        "echo \"a S b\"",
        "echo a${x}S",
        "x=S",
        "x=S ls",
        "local x=S",
        "export x=S",
        "declare -a a=(1 S)",
        "arr[S]=1",
        "echo ${arr[S]}",
        "echo ${x:-S}",
        "echo ${x:=S}",
        "echo ${x:+S}",
        "echo ${x:?S}",
        "echo ${x#S}",
        "echo ${x##*S*}",
        "echo ${x%S}",
        "echo ${x%%S}",
        "echo ${x/S/y}",
        "echo ${x//a/S}",
        "echo ${x/#S}",
        "echo ${x^^S}",
        "echo ${x,S}",
        "echo ${x:S:1}",
        "echo \"${x#S}\"",
        "echo \"${x:-S}\"",
        "echo $((1 + S))",
        "(( x = S ))",
        "[[ S ]]",
        "[[ -n S ]]",
        "[[ $x == S ]]",
        "[[ $x =~ S ]]",
        "[ S = a ]",
        "test S",
        "case S in a) ;; esac",
        "case x in S) ;; esac",
        "for i in a S; do :; done",
        "select i in S; do :; done",
        "while S; do :; done",
        "if S; then :; fi",
        "f() { echo S; }",
        "ls > S",
        "ls 2>> S",
        "cat < S",
        "cat <<< S",
        "cat <<< \"S\"",
        "cat <<EOF\nS\nEOF",
        "cat <<EOF\n  a S b\nEOF",
        "cat <<-EOF\n\tS\n\tEOF",
        "echo {a,S}",
        "echo $'a'S",
        "echo \"$x\"S",
        "sudo echo S",
        "bash -c 'echo S'",
        "bash -c \"echo S\"",
        "echo $(echo S)",
        "echo `echo \\`zzsub\\``",
        "eval 'echo S'",
        "trap 'echo S' EXIT",
        "watch 'echo S'",
        "find . -exec echo S \\;",
        "xargs echo S",
        "env X=S ls",
        "time echo S",
        "! echo S",
        "{ echo S; }",
        "(echo S)",
        "echo S &",
        "echo a | echo S",
    ];
    const SUBS: &[&str] = &[
        "$(zzsub)",
        "`zzsub`",
        "\"$(zzsub)\"",
        "$( zzsub; )",
        "$(zzsub arg)",
    ];
    let mut failures = Vec::new();
    for context in CONTEXTS {
        for sub in SUBS {
            let line = context.replace('S', sub);
            let parsed = parse(&line);
            let found = parsed
                .commands
                .iter()
                .any(|c| c.words.first().is_some_and(|w| w == "zzsub"));
            if !found && !has_unparsed(&parsed) {
                failures.push(format!("{line:?}: {parsed:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "not found:\n{}", failures.join("\n"));
}

/// Large adversarial inputs stay fast (bounded work), whatever they contain.
#[test]
fn large_inputs_are_bounded() {
    let chunks = [
        "$(",
        "\"$(",
        "((",
        "{ ",
        "<<A ",
        "<<'A' ",
        "`",
        "\\`",
        "${x#",
        "case x in ",
        "a=(",
        "[[ ",
        "$'\\'",
        "ls > f",
        "x ",
        "\"",
        "'",
        "\n",
        "; ",
        "| ",
        "sudo ",
        "bash -c '",
        "eval ",
        "echo `echo \\`",
        "$((",
        "\\\n",
        "$((a[",
        "(( a[X=",
        "let a[",
        "read X ",
        "for X in ; do ",
    ];
    for chunk in chunks {
        // A quarter of the limit keeps the test quick; the parser's time budget bounds
        // the rest (a case that needs it follows). `${x#` and `a=(` are superlinear in
        // tree-sitter-bash: smaller here.
        let size = if chunk == "${x#" || chunk == "a=(" {
            2048
        } else {
            MAX_LINE_BYTES / 4
        };
        let line: String = chunk.repeat(size / chunk.len());
        let t = cpu_time();
        let _ = parse(&line);
        let used = cpu_time() - t;
        assert!(used < Duration::from_secs(4), "{chunk:?}: {used:?} of CPU");
    }
    // Slow for tree-sitter at full size: stopped by the time budget.
    let line = "${x#".repeat(MAX_LINE_BYTES / 4 - 1);
    let t = cpu_time();
    let parsed = parse(&line);
    let used = cpu_time() - t;
    assert!(
        used < PARSE_BUDGET + Duration::from_secs(2),
        "{used:?} of CPU"
    );
    assert!(!parsed.is_parsed());
}

/// The CPU time this thread has used: the work a parse did, which a loaded machine does not
/// stretch as it does the wall clock (CI, 2 cores shared by the test threads and more: the
/// 31 parses above took 18.8 s of wall time for 1.7 s of CPU at load 12). Elsewhere than
/// Linux, the wall clock.
fn cpu_time() -> Duration {
    #[cfg(target_os = "linux")]
    {
        // The first field: nanoseconds on the CPU.
        let s = std::fs::read_to_string("/proc/thread-self/schedstat")
            .expect("/proc/thread-self/schedstat");
        let ns: u64 = s
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .expect("schedstat's first field");
        Duration::from_nanos(ns)
    }
    #[cfg(not(target_os = "linux"))]
    {
        static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        START.get_or_init(Instant::now).elapsed()
    }
}

/// tree-sitter-bash's scanner hands the next character to C's `isdigit`, whose table ends at
/// 255: a character beyond it after `{` read outside the table and crashed the process (found
/// by the shell property test). The parser now sees `%` bytes in their place; the words keep
/// their text.
#[test]
fn characters_beyond_latin1_do_not_crash_the_scanner_and_keep_their_text() {
    for line in [
        "x=$(echo {\u{10FFFF})",
        "echo {\u{1F600}..2}",
        "ls {\u{4E2D}\u{6587}",
        "cat <<\u{10FFFF}\nx\n\u{10FFFF}\necho {\u{10FFFF}",
    ] {
        let _ = parse(line);
    }
    let p = parse("echo h\u{E9}llo \u{4E2D}\u{6587} {\u{10FFFF}");
    assert_eq!(p.commands.len(), 1, "{p:?}");
    assert_eq!(
        p.commands[0].words,
        ["echo", "h\u{E9}llo", "\u{4E2D}\u{6587}", "{\u{10FFFF}"]
    );
}

/// The toolchain and console readers slice option words: a multi-byte character where a
/// letter is expected must not split a character (a panic would be a crash on input).
#[test]
fn toolchain_options_with_wide_characters_do_not_panic() {
    for line in [
        "rustc -é x.rs",
        "rustc -Cé=1 x.rs",
        "gcc -é -oé x.c",
        "ld -oé x.o",
        "ar é x",
        "openssl -é=é",
        "sqlite3 -é",
        "vim -é",
    ] {
        let _ = parse(line);
    }
}
