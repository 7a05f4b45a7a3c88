//! The wrappers of the form `WRAPPER [OPTIONS] [FIXED OPERANDS…] COMMAND [ARGS…]`, as data:
//! each one's options (from its getopt string), the operands before its command, the options
//! after which it runs no command, and whether it is transparent.

use crate::shell::options::Spec;

/// One wrapper of the form `WRAPPER [OPTIONS] [FIXED OPERANDS…] COMMAND [ARGS…]`.
pub(in crate::shell) struct PrefixWrapper {
    /// Its names (the command's basename).
    pub names: &'static [&'static str],
    /// Its options.
    pub spec: Spec,
    /// Operands between the options and the command (`timeout DURATION`, `taskset MASK`).
    pub fixed: usize,
    /// Options after which it runs no command (`--help`, `ionice -p PID`).
    pub no_inner: &'static [&'static str],
    /// Options whose argument names a file the wrapper writes (`time -o FILE`).
    pub writes: &'static [&'static str],
    /// It runs its command as it is, changing nothing a rule is about (timing, priority, a
    /// time limit, buffering, a CPU set): it is decided by its command's rules unless a rule
    /// names the wrapper itself. `sudo`, `chroot`, `fakeroot`, `proxychains` and the tracers
    /// change what the command may do or see, so they are not.
    pub transparent: bool,
}

const HELP: &[&str] = &["--help", "--version"];

/// The table; looked up by basename.
pub(in crate::shell) const PREFIX_WRAPPERS: &[PrefixWrapper] = &[
    PrefixWrapper {
        names: &["timeout", "gtimeout"],
        spec: Spec {
            short_arg: "ks",
            short_flag: "fpv",
            long_arg: &["kill-after", "signal"],
            long_flag: &[
                "foreground",
                "preserve-status",
                "verbose",
                "help",
                "version",
            ],
            ..Spec::NONE
        },
        fixed: 1,
        no_inner: HELP,
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["nice"],
        spec: Spec {
            short_arg: "n",
            long_arg: &["adjustment"],
            long_flag: &["help", "version"],
            numeric: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["nohup"],
        spec: Spec {
            long_flag: &["help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        // Writes `nohup.out` when standard output is a terminal.
        transparent: false,
    },
    PrefixWrapper {
        names: &["setsid"],
        spec: Spec {
            short_flag: "cfw",
            long_flag: &["ctty", "fork", "wait", "help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["unbuffer"],
        spec: Spec {
            short_flag: "p",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["catchsegv", "coproc", "busybox", "toybox"],
        spec: Spec::NONE,
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        // The builtin `builtin NAME`: runs the builtin, not a function of that name.
        names: &["builtin"],
        spec: Spec::NONE,
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["command"],
        spec: Spec {
            short_flag: "pvV",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-v", "-V"],
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["exec"],
        spec: Spec {
            short_arg: "a",
            short_flag: "cl",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        // `exec -c` empties the environment, `-a NAME` sets argv[0]: neither widens what the
        // command does.
        transparent: true,
    },
    PrefixWrapper {
        names: &["stdbuf"],
        spec: Spec {
            short_arg: "ioe",
            long_arg: &["input", "output", "error"],
            long_flag: &["help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["time"],
        spec: Spec {
            short_arg: "fo",
            short_flag: "apqvV",
            long_arg: &["format", "output"],
            long_flag: &[
                "append",
                "portability",
                "quiet",
                "verbose",
                "help",
                "version",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["--help", "-V", "--version"],
        writes: &["-o", "--output"],
        transparent: true,
    },
    PrefixWrapper {
        names: &["ionice"],
        spec: Spec {
            short_arg: "cnpPu",
            short_flag: "thV",
            long_arg: &["class", "classdata", "pid", "pgid", "uid"],
            long_flag: &["ignore", "help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-p", "-P", "-u", "--pid", "--pgid", "--uid", "-h", "-V"],
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["taskset"],
        spec: Spec {
            short_flag: "acphV",
            long_flag: &["all-tasks", "cpu-list", "pid", "help", "version"],
            ..Spec::NONE
        },
        fixed: 1,
        no_inner: &["-p", "--pid", "-h", "-V"],
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["chroot"],
        spec: Spec {
            long_arg: &["userspec", "groups"],
            long_flag: &["skip-chdir", "help", "version"],
            ..Spec::NONE
        },
        fixed: 1,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["strace"],
        spec: Spec {
            short_arg: "abeEIoOpPsSuUX",
            short_flag: "AcCdDfFhiknqrtTvVwxyzZ",
            long_arg: &["output", "attach", "user", "trace-path", "string-limit"],
            long_flag: &[
                "follow-forks",
                "output-separately",
                "summary-only",
                "summary",
                "summary-wall-clock",
                "help",
                "version",
                "no-abbrev",
                "relative-timestamps",
                "absolute-timestamps",
                "syscall-times",
                "stack-traces",
            ],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h", "-V", "--help", "--version"],
        writes: &["-o", "--output"],
        transparent: false,
    },
    PrefixWrapper {
        names: &["ltrace"],
        spec: Spec {
            short_arg: "aADeFlnopsuwx",
            short_flag: "bcCfhiLrStTV",
            long_arg: &["align", "output", "library"],
            long_flag: &["demangle", "help", "version", "no-signals"],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h", "-V", "--help", "--version"],
        writes: &["-o", "--output"],
        transparent: false,
    },
    PrefixWrapper {
        names: &["pkexec"],
        spec: Spec {
            long_arg: &["user"],
            long_flag: &["disable-internal-agent", "keep-cwd", "help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["caffeinate"],
        spec: Spec {
            short_arg: "tw",
            short_flag: "dimsu",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["fakeroot"],
        spec: Spec {
            short_arg: "lsib",
            short_flag: "uhv",
            long_arg: &["lib", "faked"],
            long_flag: &["unknown-is-real", "help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h", "-v", "--help", "--version"],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["proxychains", "proxychains4"],
        spec: Spec {
            short_arg: "f",
            short_flag: "q",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    // Programs that run their command in other namespaces, with other credentials or
    // limits, under a tool or with a display: not transparent (each changes what the command
    // may do or see), and their command is reported so that a deny rule on it applies.
    PrefixWrapper {
        names: &["unshare"],
        spec: Spec {
            short_arg: "SGRwl",
            short_flag: "muinpUCTfrchV",
            long_arg: &[
                "map-user",
                "map-group",
                "map-users",
                "map-groups",
                "setuid",
                "setgid",
                "root",
                "wd",
                "propagation",
                "setgroups",
                "monotonic",
                "boottime",
                "load-interp",
            ],
            long_flag: &[
                "mount",
                "uts",
                "ipc",
                "net",
                "pid",
                "user",
                "cgroup",
                "time",
                "fork",
                "map-root-user",
                "map-current-user",
                "map-auto",
                "keep-caps",
                "kill-child",
                "mount-proc",
                "mount-binfmt",
                "help",
                "version",
            ],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["nsenter"],
        spec: Spec {
            short_arg: "tSGN",
            short_opt: "mUuinpCTrw",
            short_flag: "aeFZhV",
            long_arg: &["target", "setuid", "setgid", "net-socket"],
            long_flag: &[
                "all",
                "mount",
                "uts",
                "ipc",
                "net",
                "pid",
                "user",
                "cgroup",
                "time",
                "root",
                "wd",
                "env",
                "preserve-credentials",
                "no-fork",
                "follow-context",
                "help",
                "version",
            ],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["setpriv"],
        spec: Spec {
            short_flag: "dhV",
            long_arg: &[
                "ruid",
                "euid",
                "rgid",
                "egid",
                "reuid",
                "regid",
                "groups",
                "inh-caps",
                "ambient-caps",
                "bounding-set",
                "securebits",
                "pdeathsig",
                "selinux-label",
                "apparmor-profile",
                "landlock-access",
                "landlock-rule",
            ],
            long_flag: &[
                "clear-groups",
                "keep-groups",
                "init-groups",
                "nnp",
                "no-new-privs",
                "reset-env",
                "dump",
                "help",
                "version",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-d", "--dump", "-h", "-V", "--help", "--version"],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["prlimit"],
        spec: Spec {
            short_arg: "po",
            short_opt: "cdefilmnqrstuvxy",
            short_flag: "hV",
            long_arg: &["pid", "output"],
            long_flag: &["noheadings", "raw", "verbose", "help", "version"],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-p", "--pid", "-h", "-V", "--help", "--version"],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["numactl"],
        spec: Spec {
            short_arg: "iwpPmNCLoSf",
            short_flag: "alsHh",
            long_arg: &[
                "interleave",
                "weighted-interleave",
                "preferred",
                "preferred-many",
                "membind",
                "cpunodebind",
                "physcpubind",
                "length",
                "offset",
                "shm",
                "shmid",
                "file",
                "mode",
                "policy",
            ],
            long_flag: &[
                "all",
                "localalloc",
                "show",
                "hardware",
                "huge",
                "touch",
                "strict",
                "dump",
                "dump-nodes",
            ],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[
            "-s",
            "-H",
            "--show",
            "--hardware",
            "--length",
            "--shm",
            "--file",
        ],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["valgrind"],
        spec: Spec {
            short_flag: "qvh",
            long_flag: &["help", "version", "quiet", "verbose", "trace-children"],
            long_any_value: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        // The tools' reports hold the command line (a shell reading one runs its lines).
        writes: &[
            "--log-file",
            "--xml-file",
            "--massif-out-file",
            "--callgrind-out-file",
            "--cachegrind-out-file",
            "--dhat-out-file",
            "--xtree-memory-file",
            "--xtree-leak-file",
        ],
        transparent: false,
    },
    PrefixWrapper {
        names: &["xvfb-run"],
        spec: Spec {
            short_arg: "efnpswl",
            short_flag: "ah",
            long_arg: &[
                "error-file",
                "auth-file",
                "server-num",
                "xauth-protocol",
                "server-args",
                "wait",
            ],
            long_flag: &["auto-servernum", "listen-tcp", "help"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h", "--help"],
        writes: &["-e", "--error-file", "-f", "--auth-file"],
        transparent: false,
    },
    PrefixWrapper {
        names: &["dbus-run-session"],
        spec: Spec {
            long_arg: &["config-file", "dbus-daemon"],
            long_flag: &["help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    // Round 6: compiler caches run the compiler they are given as it is (`ccache gcc -o
    // .envrc x.c` went unexamined); their own options only manage the cache. distcc and icecc
    // send the work to other hosts.
    PrefixWrapper {
        names: &["ccache", "sccache"],
        spec: Spec {
            short_flag: "szCcVhpx",
            short_arg: "MFokdX",
            long_flag: &[
                "show-stats",
                "zero-stats",
                "clear",
                "cleanup",
                "version",
                "help",
                "show-config",
                "show-compression",
                "print-stats",
                "start-server",
                "stop-server",
                "dist-status",
                "dist-auth",
            ],
            long_arg: &[
                "max-size",
                "max-files",
                "set-config",
                "get-config",
                "dir",
                "recompress",
                "evict-older-than",
                "evict-namespace",
                "trim-dir",
                "trim-max-size",
                "hash-file",
                "checksum-file",
                "extract-result",
                "inspect",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[
            "-s",
            "-z",
            "-C",
            "-c",
            "-V",
            "-h",
            "-p",
            "-x",
            "-M",
            "-F",
            "-o",
            "-k",
            "-d",
            "-X",
            "--show-stats",
            "--zero-stats",
            "--clear",
            "--cleanup",
            "--version",
            "--help",
            "--show-config",
            "--show-compression",
            "--print-stats",
            "--start-server",
            "--stop-server",
            "--dist-status",
            "--dist-auth",
            "--max-size",
            "--max-files",
            "--set-config",
            "--get-config",
            "--dir",
            "--recompress",
            "--evict-older-than",
            "--evict-namespace",
            "--trim-dir",
            "--trim-max-size",
            "--hash-file",
            "--checksum-file",
            "--extract-result",
            "--inspect",
        ],
        writes: &[],
        transparent: true,
    },
    PrefixWrapper {
        names: &["distcc", "icecc", "pump"],
        spec: Spec {
            long_flag: &[
                "help",
                "version",
                "show-hosts",
                "scan-avail",
                "show-principal",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[
            "--help",
            "--version",
            "--show-hosts",
            "--scan-avail",
            "--show-principal",
        ],
        writes: &[],
        transparent: false,
    },
    // Round 7: more programs that run their command as given (a `rm` deny rule did not
    // reach `eatmydata rm x`).
    PrefixWrapper {
        names: &["eatmydata"],
        spec: Spec {
            long_flag: &["help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    // `linux64 [options] [command]`; `setarch ARCH …` is read in `setarch`.
    PrefixWrapper {
        names: &["linux32", "linux64", "i386", "x86_64"],
        spec: SETARCH,
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    // Round 9, by their manuals: fakechroot (LD_PRELOAD), systemd-cat (the command's output
    // to the journal), run-one and its kin (one instance at a time).
    PrefixWrapper {
        names: &["fakechroot"],
        spec: Spec {
            short_arg: "ldecb",
            short_flag: "shv",
            long_arg: &["lib", "elfloader", "environment", "config-dir", "bindir"],
            long_flag: &["use-system-libs", "help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h", "-v", "--help", "--version"],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["systemd-cat"],
        spec: Spec {
            short_arg: "tp",
            long_arg: &[
                "identifier",
                "priority",
                "stderr-priority",
                "level-prefix",
                "namespace",
            ],
            long_flag: &["help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &[
            "run-one",
            "run-this-one",
            "keep-one-running",
            "run-one-constantly",
            "run-one-until-success",
            "run-one-until-failure",
        ],
        spec: Spec::NONE,
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["choom"],
        spec: Spec {
            short_arg: "np",
            long_arg: &["adjust", "pid"],
            long_flag: &["help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    // `faketime [-m] [-f] TIMESTAMP COMMAND…`
    PrefixWrapper {
        names: &["faketime"],
        spec: Spec {
            short_flag: "mf",
            long_flag: &["exclude-monotonic", "help", "version"],
            ..Spec::NONE
        },
        fixed: 1,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["ssh-agent"],
        spec: Spec {
            short_arg: "aEPtO",
            short_flag: "cDdks",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-k"],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["dbus-launch"],
        spec: Spec {
            long_arg: &["config-file", "autolaunch"],
            long_flag: &[
                "sh-syntax",
                "csh-syntax",
                "auto-syntax",
                "binary-syntax",
                "close-stderr",
                "exit-with-session",
                "exit-with-x11",
                "help",
                "version",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["torsocks"],
        spec: Spec {
            short_arg: "uaPp",
            short_flag: "iqd",
            long_arg: &["user", "pass", "address", "port"],
            long_flag: &["isolate", "quiet", "debug", "help", "version"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["uclampset"],
        spec: Spec {
            short_arg: "mMp",
            short_flag: "aRsvVh",
            long_arg: &["pid"],
            long_flag: &[
                "all-tasks",
                "reset-on-fork",
                "system",
                "verbose",
                "help",
                "version",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["systemd-inhibit"],
        spec: Spec {
            long_arg: &["what", "who", "why", "mode"],
            long_flag: &[
                "list",
                "no-pager",
                "no-legend",
                "no-ask-password",
                "help",
                "version",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["--list", "--help", "--version"],
        writes: &[],
        transparent: false,
    },
    // Round 8: more programs that run their command as given (a `rm` deny rule did not
    // reach `firejail rm x`). firejail's options take their value after `=` only.
    PrefixWrapper {
        names: &["firejail"],
        spec: Spec {
            short_flag: "c",
            long_any_value: true,
            lenient: true,
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: HELP,
        writes: &["--output", "--output-stderr", "--trace"],
        transparent: false,
    },
    PrefixWrapper {
        names: &["cgexec"],
        spec: Spec {
            short_arg: "g",
            short_flag: "h",
            long_flag: &["sticky"],
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h"],
        writes: &[],
        transparent: false,
    },
    // rlwrap's `-z FILTER` runs a filter program: not listed, so it stops the parse (asks).
    PrefixWrapper {
        names: &["rlwrap"],
        spec: Spec {
            short_arg: "bCDefgHlMOPqsStw",
            short_opt: "amp",
            short_flag: "chiInNoRrUvWA",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-v", "-h"],
        writes: &["-l"],
        transparent: false,
    },
    PrefixWrapper {
        names: &["cpulimit"],
        spec: Spec {
            short_arg: "lpePs",
            short_flag: "zimqkrvhb",
            long_arg: &["limit", "pid", "exe", "path", "signal"],
            long_flag: &[
                "lazy",
                "include-children",
                "monitor-forks",
                "quiet",
                "kill",
                "restore",
                "verbose",
                "background",
                "help",
            ],
            ..Spec::NONE
        },
        fixed: 0,
        // Watching a running process: no command of its own.
        no_inner: &["-p", "--pid", "-e", "--exe", "-P", "--path", "-h", "--help"],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["trickle"],
        spec: Spec {
            short_arg: "duwtln",
            short_flag: "hvVs",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &["-h", "-V"],
        writes: &[],
        transparent: false,
    },
    // Round 8's long tail (`ifne rm x`, `timelimit -t 5 rm x` ran past a rm deny rule).
    PrefixWrapper {
        names: &["chpst"],
        spec: Spec {
            short_arg: "uUe/nlLmdopfc",
            short_flag: "vP012",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["daemonize"],
        spec: Spec {
            short_arg: "ceEoplu",
            short_flag: "av",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &["-e", "-o", "-p", "-l"],
        transparent: false,
    },
    PrefixWrapper {
        names: &["ifne"],
        spec: Spec {
            short_flag: "n",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["zrun"],
        spec: Spec::NONE,
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["timelimit"],
        spec: Spec {
            short_arg: "SsTt",
            short_flag: "pq",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
    PrefixWrapper {
        names: &["chronic"],
        spec: Spec {
            short_flag: "ev",
            ..Spec::NONE
        },
        fixed: 0,
        no_inner: &[],
        writes: &[],
        transparent: false,
    },
];

/// setarch's options (after the architecture for `setarch`).
pub(in crate::shell) const SETARCH: Spec = Spec {
    short_flag: "vRFZLXBIST3",
    long_flag: &[
        "verbose",
        "addr-no-randomize",
        "fdpic-funcptrs",
        "mmap-page-zero",
        "addr-compat-layout",
        "read-implies-exec",
        "32bit",
        "short-inode",
        "whole-seconds",
        "sticky-timeouts",
        "3gb",
        "4gb",
        "uname-2.6",
        "list",
        "help",
        "version",
    ],
    ..Spec::NONE
};

/// The table's entry for a command's basename.
pub(in crate::shell) fn prefix_wrapper(base: &str) -> Option<&'static PrefixWrapper> {
    PREFIX_WRAPPERS.iter().find(|w| w.names.contains(&base))
}
