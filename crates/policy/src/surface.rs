//! The persistence surface: the files in a writable root that a program of the operator's runs
//! or takes commands from *after* a run, outside any sandbox. Defined once, here; everything
//! that guards it derives from it:
//!
//! | guard | what it does with the surface |
//! | --- | --- |
//! | the kernel profile (`cordon_ossandbox::profile`) | `sandbox.git = "protect"` keeps [`GIT_CONFIG`] of each writable root's `.git` read-only |
//! | the file tools (`cordon_tools::files`, also behind `cordon hook`'s Write/Edit) | a write, edit or delete of a path [`classify`] names (below its root, and as a whole path: the names above the root count) is never allowed by the root's mode alone: it is asked, or denied where the kernel protects it or it is cordon's own |
//! | `cordon hook` | a write of the hosts' hook settings ([`HOST_SETTINGS`], also where [`HOST_HOMES`] move them) by the agent's file tool is denied outright: it could unhook cordon |
//! | the after-run scan (`cordon_ossandbox::planted`) | what appeared or changed of [`GIT_CONFIG`] (in every git directory, bare ones too), [`TOOL_FILES`] and every file in [`TOOL_DIRS`] is moved aside and recorded; at the home [`HOME_FILES`] too, where they really are through the operator's links; for a wrapped MCP server after each tool call as well; in a root below a name of the surface (`proj/.claude`, `.git/hooks`, a bare repository, `~/.config/nvim`), what those names put in it ([`within_root`]) |
//!
//! What was considered and left off, each with its reason, is [`NOT_ON_SURFACE`].
//!
//! A sandboxed command can write its roots, so any of these files it leaves would run with the
//! operator's rights at the next `git status`, `cd` (direnv), editor start, `claude -p`,
//! `cargo build` or `npm install`.

use std::path::{Component, Path, PathBuf};

pub mod envrc;
pub mod git_config;
pub mod hooks;
pub mod startup;

/// A git directory's configuration surface: what git reads as configuration or runs, relative
/// to a git directory (`.git`, a bare repository, `modules/NAME`, `worktrees/NAME`), and why
/// each matters. Everything else in it (objects, refs, logs, index, HEAD, `*_HEAD` files,
/// rebase and sequencer state, `*.lock` files) is what git writes in normal work.
pub const GIT_CONFIG: &[(&str, &str)] = &[
    (
        "config",
        "the repository's configuration (core.fsmonitor, core.hooksPath, aliases, filters and pagers run programs)",
    ),
    (
        "config.worktree",
        "per-worktree configuration, read with the repository's",
    ),
    (
        "commondir",
        "makes git read config, hooks and refs from another directory",
    ),
    ("hooks", "programs git runs on commit, checkout, merge, push"),
    (
        "info",
        "attributes (which filters and diff drivers run), excludes, grafts, sparse-checkout",
    ),
    (
        "modules",
        "submodules' git directories, each with its own config and hooks",
    ),
    (
        "worktrees",
        "linked worktrees' git directories (commondir, gitdir, config.worktree)",
    ),
    ("branches", "remote definitions git still reads"),
    ("remotes", "remote definitions git still reads"),
    (
        "rr-cache",
        "recorded conflict resolutions: the directory alone turns rerere on, and the operator's next `git merge` writes a recorded resolution into the conflicted file",
    ),
    (
        "objects/info/alternates",
        "other object stores git reads objects from",
    ),
    (
        "objects/info/http-alternates",
        "other object stores git fetches from",
    ),
];

/// The todo lists of an interrupted rebase, cherry-pick or revert, relative to a git directory:
/// git runs their `exec` lines when the operator continues (checked with git 2.47: an `exec`
/// line added to `rebase-merge/git-rebase-todo` during an `edit` stop ran at `git rebase
/// --continue`). Git's working state otherwise — a sandboxed `git rebase` writes them — so
/// they stay out of [`GIT_CONFIG`] (and the kernel profile): the after-run scan watches them
/// when they hold such a line ([`todo_runs_commands`]), and the file tools ask for any write.
pub const GIT_TODO_LISTS: &[&str] = &["rebase-merge/git-rebase-todo", "sequencer/todo"];

/// Why a todo list ([`GIT_TODO_LISTS`]) is on the surface.
pub const GIT_TODO_WHY: &str = "a todo list with `exec` lines: the operator's `git rebase --continue` (or `cherry-pick --continue`) runs them";

/// Whether the text of a todo list ([`GIT_TODO_LISTS`]) holds a line git executes: `exec` or
/// `x` after blanks, as git's `parse_insn_line` reads it (this skips more than git's spaces
/// and tabs: a line read as a command here may be one git refuses, never the other way).
pub fn todo_runs_commands(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n').any(|line| {
        let line = line.trim_ascii_start();
        line.starts_with(b"exec ")
            || line.starts_with(b"x ")
            || line.starts_with(b"exec\t")
            || line.starts_with(b"x\t")
    })
}

/// Files, relative to any directory of a root, that a tool of the operator's runs or takes
/// settings from, and why each matters. Almost every name starts with a dot (the after-run scan
/// skips other plain files by name alone, without a `stat`); the few that do not are
/// compared by name (opencode's `opencode.json`, `tui.json`, `rust-toolchain.toml`,
/// `mise.toml`), and so is the first name of an entry below a directory (`mise` of
/// `mise/config.toml`: a link by that name is a settings directory too).
pub const TOOL_FILES: &[(&str, &str)] = &[
    (".envrc", "direnv runs it when a shell enters the directory"),
    (
        ".vscode/tasks.json",
        "VS Code runs its tasks (some on opening the folder)",
    ),
    (
        ".vscode/settings.json",
        "VS Code settings name programs it runs (interpreters, formatters, terminal env)",
    ),
    (
        ".vscode/launch.json",
        "VS Code runs its launch configurations",
    ),
    // Coding agents' project settings: their hooks and MCP servers are commands the host runs
    // outside any sandbox, cordon's own hook among what they configure.
    (
        ".claude/settings.json",
        "Claude Code runs the hooks it configures (and takes cordon's hook from it)",
    ),
    (
        ".claude/settings.local.json",
        "Claude Code runs the hooks it configures (and takes cordon's hook from it)",
    ),
    (
        ".mcp.json",
        "Claude Code starts the MCP servers it names (commands of the file's choosing)",
    ),
    (
        ".gemini/settings.json",
        "Gemini CLI runs the hooks and MCP servers it configures",
    ),
    (
        ".codex/hooks.json",
        "Codex runs the hooks it configures (and takes cordon's hook from it)",
    ),
    (
        ".codex/config.toml",
        "Codex starts the MCP servers and runs the commands it configures",
    ),
    (
        ".github/copilot/settings.json",
        "GitHub Copilot CLI runs the hooks it configures",
    ),
    (
        ".github/copilot/settings.local.json",
        "GitHub Copilot CLI runs the hooks it configures",
    ),
    (
        "opencode.json",
        "opencode loads the plugins and starts the MCP servers it names",
    ),
    (
        "opencode.jsonc",
        "opencode loads the plugins and starts the MCP servers it names",
    ),
    // opencode's TUI configuration, found up from where opencode starts and in `.opencode/`
    // (its `ConfigPaths.projectFiles("tui", …)`): its `plugin` list is code opencode loads.
    ("tui.json", "opencode's TUI loads the plugins it names"),
    ("tui.jsonc", "opencode's TUI loads the plugins it names"),
    (".nvim.lua", "Neovim runs it with 'exrc' set"),
    (".nvimrc", "Neovim runs it with 'exrc' set"),
    (".exrc", "Vim and Neovim run it with 'exrc' set"),
    // Vim's 'exrc' reads these from the current directory as it reads `.exrc` (`:help
    // 'exrc'`; the real vim 9 ran a project `.vimrc`: files.rs::vims_exrc_files_are_on_the_surface).
    (".vimrc", "Vim runs it with 'exrc' set"),
    (".gvimrc", "Vim runs it with 'exrc' set"),
    // Python's pdb reads `.pdbrc` from the directory it starts in, besides the home's, and runs
    // its lines as debugger commands, Python statements included (the real python 3.11 did:
    // tools' bypass.rs::a_project_pdbrc_is_on_the_surface).
    (
        ".pdbrc",
        "pdb runs the commands and Python statements it holds at `python -m pdb` or a `breakpoint()` started here",
    ),
    // Round 10 (redsurf23): Perl's debugger likewise runs `./.perldb` (else the home's) as Perl
    // code at `perl -d`, where the file is the user's and no one else may write it, as a file a
    // run leaves is (the real perl 5.36 did: tools' files.rs::perls_debugger_file_is_on_the_surface).
    (
        ".perldb",
        "the Perl debugger runs it as Perl code at `perl -d` started here",
    ),
    // Round 9 (redsurf22): language shells that run a startup file from the directory they
    // start in, besides the home's. Checked with the real programs (tools'
    // files.rs::ruby_and_r_startup_files_are_on_the_surface): irb 1.4 takes the first of
    // `~/.irbrc` and these (`IRB.rc_file_generators`), pry 0.13 loads `./.pryrc` too, R 4.2
    // sources `./.Rprofile` (or the `R_PROFILE_USER` a `./.Renviron` names) at every start,
    // `Rscript` included.
    (".irbrc", IRB),
    ("irb.rc", IRB),
    ("_irbrc", IRB),
    ("$irbrc", IRB),
    (".config/irb/irbrc", IRB),
    (".pryrc", "pry runs it at every start here, besides the home's"),
    (
        ".Rprofile",
        "R (and Rscript) runs it at every start here (the user profile is looked for here before the home)",
    ),
    (
        ".Renviron",
        "R reads it at every start here: its variables (R_PROFILE_USER, R_LIBS, LD_PRELOAD) choose the code R runs",
    ),
    // From their documentation (neither is installable here in a reasonable size): GHCi runs
    // `./.ghci` (its `:!` shell commands and `:def` macros) unless `-ignore-dot-ghci`, and
    // Octave runs `./.octaverc` after the home's at every start.
    (
        ".ghci",
        "GHCi runs its commands (`:!` shell commands among them) at every start here",
    ),
    (".octaverc", "Octave runs it at every start here"),
    // Build tools that run programs a configuration names.
    (
        ".cargo/config.toml",
        "cargo runs the programs it names (build.rustc-wrapper, target runners, aliases)",
    ),
    (
        ".cargo/config",
        "cargo runs the programs it names (build.rustc-wrapper, target runners, aliases)",
    ),
    (
        ".npmrc",
        "npm runs what it names (script-shell, node-options with --require)",
    ),
    // Round 4 of the outside review. rustup's proxies read these up from the current directory
    // at every `cargo`/`rustc` — `--version` from a shell prompt, an editor's rust-analyzer —
    // and run the toolchain a `path` names.
    (
        "rust-toolchain.toml",
        "rustup runs the toolchain it names by path at any cargo or rustc start here (prompts, editors)",
    ),
    (
        "rust-toolchain",
        "rustup runs the toolchain it names by path at any cargo or rustc start here (prompts, editors)",
    ),
    (
        ".pre-commit-config.yaml",
        "pre-commit's git hook runs the commands it names at the next git commit",
    ),
    (
        ".hg/hgrc",
        "Mercurial runs the hooks and loads the extensions it names at any hg command (prompts too)",
    ),
    (
        ".yarnrc.yml",
        "yarn runs the yarnPath and plugins it names at any yarn command",
    ),
    (".yarnrc", "yarn runs the yarn-path it names at any yarn command"),
    // mise (checked with mise 2026.9.15's `mise config ls`): on `cd` in a shell where it is
    // activated it sources `[env] _.source` scripts and runs `[hooks]` of every file below, once
    // the directory is trusted, and trust is by path (`mise trust`, `trusted_config_paths`):
    // a changed or new file there is taken as it is.
    ("mise.toml", MISE),
    (".mise.toml", MISE),
    ("mise.local.toml", MISE),
    (".mise.local.toml", MISE),
    (".mise/config.toml", MISE),
    (".mise/config.local.toml", MISE),
    ("mise/config.toml", MISE),
    ("mise/config.local.toml", MISE),
    (".config/mise.toml", MISE),
    (".config/mise.local.toml", MISE),
    (".config/mise/config.toml", MISE),
    (".config/mise/config.local.toml", MISE),
    (".config/mise/mise.toml", MISE),
    (".config/mise/mise.local.toml", MISE),
    // Needs no trust at all: `node path:/elsewhere` puts `/elsewhere/bin` first on the PATH of
    // the shell that enters the directory (mise; asdf reads `path:` versions too). (The
    // per-language files, `.nvmrc`, `.python-version`, are off by default in mise and take no
    // `path:`: not on the surface.)
    (
        ".tool-versions",
        "mise and asdf put the directory a `path:` version names first on the PATH of a shell entering here (no trust asked)",
    ),
    // MCP configurations of other hosts and editors: each names commands started outside any
    // sandbox (from their documentation; neither is installable here).
    (
        ".vscode/mcp.json",
        "VS Code starts the MCP servers it names (commands of the file's choosing)",
    ),
    (
        ".cursor/mcp.json",
        "Cursor starts the MCP servers it names (commands of the file's choosing)",
    ),
    (".cursor/hooks.json", "Cursor runs the hooks it configures"),
    // Jujutsu (from jj-lib's `secure_config.rs`, not installable here): jj before 0.37 reads
    // the repository's and the workspace's configuration from these files at every command;
    // later ones read it from the operator's config directory through the `*config-id` file
    // and, where that is missing, take (migrate) `config.toml` from here. Its `ui.pager`,
    // `ui.editor`, diff tools, `fix.tools` and aliases are programs jj runs, a pager at a
    // plain `jj log`. `git_target` names the git directory whose configuration jj's git
    // subprocess reads.
    (".jj/repo/config.toml", JJ),
    (".jj/repo/config-id", JJ),
    (".jj/workspace-config.toml", JJ),
    (".jj/workspace-config-id", JJ),
    (
        ".jj/repo/store/git_target",
        "Jujutsu runs git on the git directory it names (whose configuration runs programs)",
    ),
    // Dev containers (checked with the real `@devcontainers/cli` 0.89.0, the tool VS Code's
    // "Reopen in Container" runs): `devcontainer up` ran `initializeCommand` on the host, as
    // the operator, before any container existed. (`.devcontainer/` is a directory below.)
    (".devcontainer.json", DEVCONTAINER),
];

/// Files of a tool's, relative to any directory of a root, known by how their name ends (the
/// rest of the name is the project's to choose), and why each matters. The after-run scan
/// looks at these names too.
pub const TOOL_SUFFIXES: &[(&str, &str)] = &[
    // VS Code's multi-root workspace file (`code proj.code-workspace`, "Open Workspace from
    // File"): its `settings` are `.vscode/settings.json`'s (terminal env, interpreters), its
    // `tasks` and `launch` `.vscode/tasks.json`'s and `launch.json`'s, a task with
    // `runOn: folderOpen` among them.
    (
        ".code-workspace",
        "VS Code applies the settings, tasks and launch configurations of a workspace file it opens (a task may run on opening)",
    ),
];

/// Why `name` (a file name) is a tool's file by how it ends ([`TOOL_SUFFIXES`]).
pub fn tool_suffix(name: &[u8]) -> Option<&'static str> {
    TOOL_SUFFIXES
        .iter()
        .find(|(suffix, _)| name.ends_with(suffix.as_bytes()))
        .map(|(_, why)| *why)
}

const IRB: &str = "irb runs it at every start here where the home has no `.irbrc` (the first of its startup files it finds)";
const CURLRC: &str = "curl fetches the URLs it names at every call and writes them where it says (any file of the operator's)";
const LESSKEY: &str = "less runs the `LESSOPEN` input preprocessor it sets on every file it shows (git's pager, `man`)";
const JJ: &str = "Jujutsu runs the pager, editor, diff and fix tools and aliases this configuration names (a pager at a plain `jj log`)";
const DEVCONTAINER: &str = "opening the dev container runs its `initializeCommand` on the host, and its mounts, run arguments and build files decide what the container reaches";

const MISE: &str = "mise sources the env scripts and runs the hooks it names when a shell enters the directory (trust is by path)";

/// Files a red team named that are *not* on the surface, and why: none runs a program of the
/// file's choosing at a command the operator runs without choosing to run the project's code
/// (a build, a test, a package install does that anyway). Kept here so that a change of mind
/// is a change of this list (a test holds that [`classify`] finds none of them).
pub const NOT_ON_SURFACE: &[(&str, &str)] = &[
    (
        ".gitmodules",
        "git refuses `submodule.*.update = !command` from it (checked: git 2.47 says `invalid value`); the rest names URLs cloned only at the operator's `git submodule update`",
    ),
    (
        ".gitattributes",
        "names filter and diff drivers, which run only as git's configuration (on the surface) defines them",
    ),
    (
        ".lfsconfig",
        "git-lfs takes only URL and fetch keys from it, no command",
    ),
    (
        ".env",
        "variables; direnv and mise read it only when `.envrc` or a mise file (on the surface) says so, and then it is what an `.envrc` loads (`named_by_envrc`) — or when the operator's direnv configuration sets `load_dotenv`: then it is on the surface as `.envrc` is ([`dotenv_by_direnv`])",
    ),
    (
        ".vscode/extensions.json",
        "recommendations VS Code shows; it installs nothing by itself",
    ),
    (
        "CLAUDE.md",
        "instructions to the agent, not code: what the next session does still goes through cordon's hook (also AGENTS.md, GEMINI.md, .github/copilot-instructions.md, .cursor/rules; Claude Code's `.claude/commands` and `.claude/skills` run their `!` commands and `.claude/agents` their hooks without cordon's hook, Gemini CLI's `.gemini/agents` and Copilot CLI's `.github/agents` start MCP servers, and Gemini CLI's `.gemini/commands` and opencode's `.opencode/command` run their `!` commands, so they are on the surface)",
    ),
    (
        ".opencode/package.json",
        "opencode installs its plugin package there with lifecycle scripts off (`ignoreScripts`, opencode 1.18.33); the `.npmrc` it reads is on the surface",
    ),
    (
        ".python-version",
        "a version name: pyenv refuses paths in it; mise reads it only when enabled (off by default) and takes no `path:` there (mise 2026.9.15; also .nvmrc, .node-version)",
    ),
    (
        "uv.toml",
        "index and build settings read at the operator's `uv sync`/`uv run`, which builds and runs the project anyway (also pip's and bundler's, which a project directory does not configure)",
    ),
    (
        ".venv/lib/python3.12/site-packages/x.pth",
        "a virtual environment in a root is the project's installed code: its `.pth` files, `sitecustomize.py` and `usercustomize.py` run at every start of its python, but so do its `bin/python` (a link the run can replace) and `bin/activate`, and `pip install` writes `.pth` files there in normal work (editable installs, setuptools' `distutils-precedence.pth`); the operator runs it by choosing that environment. The home's user site-packages, which every python start reads, is on the surface (`PYTHON_STARTUP`)",
    ),
    (
        ".venv/lib/python3.12/site-packages/sitecustomize.py",
        "as the `.pth` files of a virtual environment in a root (the project's installed code)",
    ),
    (
        ".run/app.run.xml",
        "a JetBrains run configuration kept as a project file: it runs when the operator runs it, or at project open when a startup task names it, and the startup tasks are kept in `.idea` (on the surface); so it is as the project's own scripts a startup task runs",
    ),
    // Round 8 (redsurf21): the project's own code that the operator's build, test runner or
    // editor runs by design. An editor's language tooling runs it on opening a trusted
    // workspace (rust-analyzer builds `build.rs` and proc macros, VS Code's ESLint extension
    // loads `eslint.config.js`), as it runs a venv's or `node_modules`' code: asking for these
    // would ask for most of a project's writes, so the line is the venv's.
    (
        "build.rs",
        "the project's code: cargo and rust-analyzer build and run it as they build the crate (also proc macros, `eslint.config.js`, `conftest.py`, `Makefile`, `justfile`, `Taskfile.yml`)",
    ),
    (
        "package.json",
        "its scripts run at the operator's `npm install`/`npm run`, which install or run the project's code anyway (a dependency's lifecycle scripts as much); the `.npmrc` and `.yarnrc.yml` that choose the shell and the package manager are on the surface",
    ),
    (
        "bunfig.toml",
        "its `preload` scripts run at `bun run`/`bun test`, which run the project's code anyway (from bun's docs; bun is not installable here)",
    ),
    // Round 9 (redsurf22), with the real programs where they are here.
    (
        ".editorconfig",
        "indentation, charset and line-end settings: no key names a program (EditorConfig's spec; editors' plugins read only those)",
    ),
    (
        ".dir-locals.el",
        "Emacs asks before it applies an `eval` form or a risky variable from it (`enable-local-variables` is `t`: unsafe values are asked, each time until the operator marks that value safe); a safe `compile-command` runs only at the operator's `M-x compile`, which builds the project anyway",
    ),
    (
        ".gdbinit",
        "gdb declines a `.gdbinit` in the directory it starts in unless `auto-load safe-path` names it (checked: gdb 13 printed `auto-loading has been declined` and ran nothing); the home's is on the surface (lldb's `.lldbinit` likewise by its `target.load-cwd-lldbinit` default, from its docs)",
    ),
    (
        ".pylintrc",
        "its `init-hook` is Python that pylint runs, as an editor's linter runs a project's `eslint.config.js`: the project's code run by a tool on the project (the line `build.rs` draws; also `pyproject.toml`'s `[tool.pylint]`, `setup.cfg`, `tox.ini`)",
    ),
    (
        ".pnpmfile.cjs",
        "run by `pnpm install`, which runs the project's own lifecycle scripts anyway (also gradle.properties, .mvn/jvm.config, .mvn/extensions.xml, Directory.Build.props, justfile: read by a build of the project)",
    ),
];

/// Directories, relative to any directory of a root, whose *every* file a tool of the
/// operator's loads and runs: a new file of any name there is a plant. (At the home too:
/// `~/.copilot/hooks`, `~/.config/opencode/plugin`.)
pub const TOOL_DIRS: &[(&str, &str)] = &[
    (
        ".github/hooks",
        "GitHub Copilot CLI runs the hooks each file here configures",
    ),
    (
        ".copilot/hooks",
        "GitHub Copilot CLI runs the hooks each file here configures",
    ),
    (
        ".opencode/plugin",
        "opencode loads each plugin here into its own process",
    ),
    (
        ".opencode/plugins",
        "opencode loads each plugin here into its own process",
    ),
    (
        ".opencode/tool",
        "opencode runs each custom tool here in its own process",
    ),
    (
        ".opencode/tools",
        "opencode runs each custom tool here in its own process",
    ),
    (
        ".config/opencode/plugin",
        "opencode loads each plugin here into its own process",
    ),
    (
        ".config/opencode/plugins",
        "opencode loads each plugin here into its own process",
    ),
    // opencode's custom commands (`NAME.md`, in `.opencode/` and its global directory): the
    // operator's `/NAME` (`opencode run --command NAME`) runs each ``!`cmd` `` of the template
    // in a shell before the model sees it, and no plugin hook sees that shell; a command of a
    // built-in's name replaces it (opencode 1.18.33, checked: an `init.md` an earlier run
    // wrote ran `rm -rf keep` at the operator's next `/init`; `hosts_opencode.rs`).
    (".opencode/command", OPENCODE_COMMANDS),
    (".opencode/commands", OPENCODE_COMMANDS),
    (".config/opencode/command", OPENCODE_COMMANDS),
    (".config/opencode/commands", OPENCODE_COMMANDS),
    // husky, the usual npm hook manager, sets `core.hooksPath = .husky/_`, whose stubs run
    // `.husky/<hook>`: git runs each at the next commit, checkout or merge.
    (
        ".husky",
        "git runs the hooks here (husky's core.hooksPath) at the next commit, checkout or merge",
    ),
    // JetBrains IDEs (IntelliJ IDEA, PyCharm, WebStorm, …) on opening the project: Startup
    // Tasks launch run configurations (kept in `workspace.xml` or `runConfigurations/`), File
    // Watchers (`watcherTasks.xml`) run their program on every save, the project SDK
    // (`misc.xml`) names the interpreter it starts to index. Which file holds what varies by
    // IDE and version: every file. (Cost: an IDE open during a run rewrites `workspace.xml`,
    // which the after-run scan then reports and undoes.)
    (
        ".idea",
        "JetBrains IDEs run what it configures when the project opens or a file is saved (startup tasks, run configurations, file watchers, the SDK's interpreter)",
    ),
    // `.devcontainer/devcontainer.json` and `.devcontainer/NAME/devcontainer.json`, and the
    // Dockerfiles and compose files they name (`--privileged`, host mounts): every file.
    (".devcontainer", DEVCONTAINER),
    // Zed (docs, "worktree trust"; not installable here): `.zed/settings.json` names language
    // servers, MCP servers and formatters Zed starts, `tasks.json` and `debug.json` commands;
    // a worktree's trust is kept by path, so a trusted worktree's changed files are taken.
    (
        ".zed",
        "Zed starts the language servers, MCP servers and tasks its project settings name (trust is by path)",
    ),
    // Helix (docs, "workspace trust"; not installable here): `.helix/languages.toml` names
    // language servers and formatters Helix runs, `.helix/config.toml` editor settings; a
    // workspace is trusted by path (or every one with `editor.insecure`).
    (
        ".helix",
        "Helix runs the language servers and formatters its workspace configuration names (trust is by path)",
    ),
    // Claude Code's skills (`NAME/SKILL.md`) and custom commands (`NAME.md`, which the same
    // `Skill` tool loads): loading one runs each ``!`cmd` `` of its text in a shell, before
    // the text reaches the model, and no hook sees that shell (Claude Code 2.1.197, checked:
    // a skill a sandboxed run wrote deleted `keep` at the next session's `Skill` call, under a
    // policy denying `rm -rf`; `hosts_claude.rs`). At the home too (`~/.claude/skills`).
    (".claude/skills", CLAUDE_SKILLS),
    (".claude/commands", CLAUDE_SKILLS),
    // A sub-agent's definition (`NAME.md`): the hooks its front matter names run while the
    // agent works, outside any sandbox (checked: a `PreToolUse` hook there ran at the
    // sub-agent's first tool call, which the model starts with `Agent`, no approval asked).
    (
        ".claude/agents",
        "Claude Code runs the hooks a sub-agent's definition here names while that agent works",
    ),
    // Gemini CLI's sub-agent definitions (`NAME.md`): the MCP servers their `mcp_servers`
    // names are started when the model invokes the agent, commands no hook sees (Gemini CLI
    // 0.61, checked: one in `~/.gemini/agents` ran at once; a project's, once the operator
    // acknowledged the file, which Gemini asks by its hash).
    (
        ".gemini/agents",
        "Gemini CLI starts the MCP servers a sub-agent's definition here names when the agent is invoked",
    ),
    // Gemini CLI's custom commands (`NAME.toml`): the operator's `/NAME` (`gemini -p /NAME`
    // too) runs each `!{cmd}` of the prompt in a shell before the model sees it; no BeforeTool
    // hook sees that shell, and under `--yolo` Gemini's own policy asks nothing (Gemini CLI
    // 0.61, checked: one an earlier run wrote ran `rm -rf keep` at the next `/NAME`; a
    // project's in a trusted folder). `~/.gemini/commands` at the home.
    (
        ".gemini/commands",
        "Gemini CLI runs the `!{…}` commands of a custom command here in a shell, without a hook, when the operator runs that command",
    ),
    // Copilot CLI's custom agents (`NAME.agent.md`): the MCP servers their `mcp-servers`
    // names are started when the model calls `task` with the agent (Copilot CLI 1.0.102,
    // checked: no trust asked in `-p`). `~/.copilot/agents` at the home.
    (".github/agents", COPILOT_AGENTS),
    (".copilot/agents", COPILOT_AGENTS),
    // mise reads every `*.toml` here as one of its configuration files (see `MISE`).
    (".config/mise/conf.d", MISE),
    (".mise/conf.d", MISE),
    ("mise/conf.d", MISE),
];

/// Why Copilot CLI's custom agents are on the surface ([`TOOL_DIRS`]).
const COPILOT_AGENTS: &str =
    "Copilot CLI starts the MCP servers a custom agent here names when the agent is run";

/// Why opencode's custom commands are on the surface ([`TOOL_DIRS`]).
const OPENCODE_COMMANDS: &str = "opencode runs the `!` commands of a custom command here in a shell, without its plugin hook, when the operator runs that command";

/// Why Claude Code's skills and commands are on the surface ([`TOOL_DIRS`]).
const CLAUDE_SKILLS: &str = "Claude Code runs the `!` commands of a skill or command here in a shell, without a hook, when its Skill tool loads it";

/// Files relative to the operator's home that configure or run their tools everywhere: when a
/// writable root holds the home, a command could leave any of them for the operator's next
/// shell, `git`, `ssh` or agent. (The home itself may be a root: many setups run agents from
/// it.) [`TOOL_FILES`] apply at the home too (`~/.claude/settings.json`, `~/.cargo/config.toml`).
pub const HOME_FILES: &[(&str, &str)] = &[
    (
        ".gitconfig",
        "git's global configuration: core.fsmonitor, hooksPath, aliases run in every repository",
    ),
    (
        ".config/git/config",
        "git's global configuration: core.fsmonitor, hooksPath, aliases run in every repository",
    ),
    (
        ".config/git/attributes",
        "git's global attributes: which filters and diff drivers run",
    ),
    (
        ".ssh/config",
        "ssh runs its ProxyCommand and LocalCommand lines",
    ),
    (".ssh/rc", "sshd runs it at every login"),
    (".ssh/authorized_keys", "who may log in as the operator"),
    // Round 8 (redsurf21): programs of the operator's that run a command this file names at
    // their ordinary start, wherever they are run.
    (
        ".ssh/environment",
        "sshd sets these variables (LD_PRELOAD among them) at every login where PermitUserEnvironment is on",
    ),
    (".gdbinit", "gdb runs its commands (`shell …`) at every start"),
    (
        ".config/gdb/gdbinit",
        "gdb runs its commands (`shell …`) at every start",
    ),
    (
        ".kube/config",
        "kubectl runs a user's `exec` credential plugin at every command",
    ),
    (
        ".aws/config",
        "the AWS CLI and SDKs run a profile's `credential_process` at every call",
    ),
    (
        ".docker/config.json",
        "docker runs the `docker-credential-*` helpers and `cliPluginsExtraDirs` plugins it names",
    ),
    (
        ".config/gh/config.yml",
        "gh runs its `!` aliases through the shell",
    ),
    (
        ".gnupg/gpg-agent.conf",
        "gpg-agent runs the `pinentry-program` it names whenever a key needs a passphrase",
    ),
    (
        ".ipython/profile_default/ipython_config.py",
        "IPython runs it at every start",
    ),
    (".xprofile", "the display manager sources it at every graphical login"),
    // Round 9 (redsurf22). Checked with the real bash 5.2 and bash-completion 2.11 (Debian's
    // skeleton `.bashrc` loads it): `~/.bash_completion` ran at every interactive shell. The
    // rest from their documentation (not installed here).
    (
        ".bash_completion",
        "bash-completion sources it in every interactive shell",
    ),
    (".xinitrc", "startx runs it as the X session"),
    (".xsession", "the display manager runs it as the X session"),
    (".screenrc", "GNU screen runs its `exec` and `screen` commands at every start"),
    (
        ".hgrc",
        "Mercurial runs the hooks and loads the extensions it names at any hg command (prompts too)",
    ),
    (
        ".config/hg/hgrc",
        "Mercurial runs the hooks and loads the extensions it names at any hg command (prompts too)",
    ),
    // Round 10 (redsurf23): programs that run what a file of the home names at their ordinary
    // start, each checked with the real one. sqlite3 3.40 runs the dot-commands of the
    // `~/.sqliterc` of the passwd entry's home (a `.shell` line ran at `sqlite3 :memory:`);
    // psql 15 ran a `\!` line of `~/.psqlrc` at `psql -c` once connected; wget 1.21 ran the
    // `use_askpass` program `~/.wgetrc` names at a download that then failed to connect; less
    // 590 ran the `LESSOPEN` preprocessor `~/.lesskey` (or its compiled `~/.less`, or
    // `$XDG_CONFIG_HOME/lesskey`) sets on the file it showed, stdin too with `|-` (git's
    // pager, `man`); IPython 8.12 ran the `exec_lines` of a JSON profile
    // (scan_escape.rs::the_homes_pager_downloader_and_debugger_files_are_watched runs wget,
    // less and perl). From their documentation: lldb runs `~/.lldbinit` at every start (its
    // `platform shell` and `script` commands), and every Jupyter kernel the profile's
    // `ipython_kernel_config` files.
    (".sqliterc", "sqlite3 runs its dot-commands (`.shell`, `.system`) at every start"),
    (".psqlrc", "psql runs its meta-commands (`\\!` runs a shell command) at every start"),
    (".wgetrc", "wget runs the `use_askpass` program it names at every download"),
    // curl 7.88 fetched a `url` line of `~/.curlrc` besides the one asked for, at a plain
    // `curl`, and wrote it where an `output` line said: a `file://` URL of a root written over
    // `~/.bashrc`, no network needed (also `$XDG_CONFIG_HOME/.curlrc`).
    (".curlrc", CURLRC),
    (".config/.curlrc", CURLRC),
    (".lesskey", LESSKEY),
    (".less", LESSKEY),
    (".config/lesskey", LESSKEY),
    (
        ".ipython/profile_default/ipython_config.json",
        "IPython runs the `exec_lines` and files it names at every start",
    ),
    (
        ".ipython/profile_default/ipython_kernel_config.py",
        "every Jupyter kernel (ipykernel) runs it at start",
    ),
    (
        ".ipython/profile_default/ipython_kernel_config.json",
        "every Jupyter kernel (ipykernel) runs the `exec_lines` it names at start",
    ),
    (".lldbinit", "lldb runs its commands (`platform shell`, `script`) at every start"),
    (".xsessionrc", "Debian's X session sources it at every graphical login"),
    (".bashrc", "bash runs it in every interactive shell"),
    (".bash_profile", "bash runs it in every login shell"),
    (".bash_login", "bash runs it in every login shell"),
    (".bash_logout", "bash runs it when a login shell exits"),
    (".profile", "login shells run it"),
    (".zshrc", "zsh runs it in every interactive shell"),
    (".zshenv", "zsh runs it in every shell"),
    (".zprofile", "zsh runs it in every login shell"),
    (".config/fish/config.fish", "fish runs it in every shell"),
    (".inputrc", "readline binds keys to commands with it"),
    (
        ".bash_aliases",
        "bash runs it in every interactive shell (the default .bashrc sources it)",
    ),
    // Round 11 (redteam24): rustup's installer has `~/.profile`, `~/.bashrc` and `~/.zshenv`
    // source `~/.cargo/env` (and fish's `conf.d/rustup.fish` the `.fish` one) in every shell; on
    // this machine's own `.profile` a changed one ran at `bash -l`. A root of `~/.cargo` (for
    // cargo's registry) held it, and nothing asked or looked.
    (
        ".cargo/env",
        "every shell sources it where rustup is installed (`. \"$HOME/.cargo/env\"` in .profile, .bashrc, .zshenv)",
    ),
    (
        ".cargo/env.fish",
        "every fish shell sources it where rustup is installed (conf.d/rustup.fish)",
    ),
    (".zlogin", "zsh runs it in every login shell"),
    (".zlogout", "zsh runs it when a login shell exits"),
    (".vimrc", "Vim runs it at every start"),
    (".vim/vimrc", "Vim runs it at every start"),
    (".config/nvim/init.lua", "Neovim runs it at every start"),
    (".config/nvim/init.vim", "Neovim runs it at every start"),
    (".emacs", "Emacs runs it at every start"),
    (".emacs.d/init.el", "Emacs runs it at every start"),
    (".config/emacs/init.el", "Emacs runs it at every start"),
    (
        ".tmux.conf",
        "tmux runs its run-shell and if-shell commands at every start",
    ),
    (
        ".config/tmux/tmux.conf",
        "tmux runs its run-shell and if-shell commands at every start",
    ),
    (".direnvrc", "direnv runs it before every .envrc"),
    (
        ".config/direnv/direnvrc",
        "direnv runs it before every .envrc",
    ),
    // Checked with direnv 2.32: a `[whitelist] prefix` here made a new `.envrc` run on `cd`
    // without `direnv allow`. (`config.toml` is its name up to 2.21.)
    (
        ".config/direnv/direnv.toml",
        "direnv runs every .envrc its whitelist names without asking",
    ),
    (
        ".config/direnv/config.toml",
        "direnv (up to 2.21) runs every .envrc its whitelist names without asking",
    ),
    (
        ".config/helix/config.toml",
        "Helix's configuration (`editor.insecure` takes every workspace's language servers)",
    ),
    (
        ".config/helix/languages.toml",
        "Helix runs the language servers and formatters it names",
    ),
    (
        ".local/share/helix/trusted_workspaces",
        "Helix runs the language servers and workspace configuration of each directory listed",
    ),
    (
        ".config/zed/settings.json",
        "Zed starts the language servers, MCP servers and formatters it names",
    ),
    (".config/zed/tasks.json", "Zed runs the tasks it names"),
    (
        ".claude.json",
        "Claude Code's user state: the MCP servers it starts and the projects it trusts",
    ),
    (
        ".gemini/settings.json",
        "Gemini CLI runs the hooks and MCP servers it configures",
    ),
    (
        ".codex/config.toml",
        "Codex starts the MCP servers and runs the commands it configures",
    ),
    (".codex/hooks.json", "Codex runs the hooks it configures"),
    (
        ".copilot/config.json",
        "GitHub Copilot CLI runs the hooks it configures",
    ),
    (
        ".copilot/settings.json",
        "GitHub Copilot CLI runs the hooks it configures",
    ),
    (
        ".copilot/settings.local.json",
        "GitHub Copilot CLI runs the hooks it configures",
    ),
    // Round 11: Copilot CLI 1.0.102 starts the MCP servers here at every start, no trust asked
    // (checked: one a run wrote ran `rm -rf keep` at the next `copilot -p`; `hosts_copilot.rs`).
    (
        ".copilot/mcp-config.json",
        "GitHub Copilot CLI starts the MCP servers it names at every start",
    ),
    (
        ".config/opencode/opencode.json",
        "opencode loads the plugins and starts the MCP servers it names",
    ),
    (
        ".config/opencode/opencode.jsonc",
        "opencode loads the plugins and starts the MCP servers it names",
    ),
    // Round 12 (redteam25), build tools read from the home in every project. Checked: go 1.19
    // took `GOFLAGS=-toolexec=PROG` from `~/.config/go/env` (`go env GOFLAGS`), which runs
    // PROG at every `go build`/`go test`; Debian's maven 3 `mvn` script sources `~/.mavenrc`
    // at every start. Gradle (docs, not installable here) runs its init scripts at every
    // build and starts every build's daemon with `org.gradle.jvmargs` (a `-javaagent`).
    (
        ".config/go/env",
        "go takes its GOFLAGS from it at every command (`-toolexec=PROG` runs PROG at every build)",
    ),
    (".mavenrc", "mvn sources it at every start"),
    (".gradle/init.gradle", GRADLE_INIT),
    (".gradle/init.gradle.kts", GRADLE_INIT),
    (
        ".gradle/gradle.properties",
        "Gradle starts every build's daemon with the `org.gradle.jvmargs` it sets (a `-javaagent` is code)",
    ),
    // Shells and prompts no other entry names (from their documentation): each runs this
    // file at every start (starship: a custom module's `command` at every prompt).
    (".config/starship.toml", "starship runs its custom modules' commands at every prompt"),
    (".config/nushell/config.nu", "nushell runs it at every start"),
    (".config/nushell/env.nu", "nushell runs it at every start"),
    (".xonshrc", "xonsh runs it at every start"),
    (".config/xonsh/rc.xsh", "xonsh runs it at every start"),
    (".tcshrc", "tcsh runs it at every start"),
    (".cshrc", "csh and tcsh run it at every start"),
    (".login", "csh and tcsh run it in every login shell"),
    (".kshrc", "ksh93 runs it in every interactive shell"),
    (".mkshrc", "mksh runs it in every interactive shell"),
    (".config/elvish/rc.elv", "elvish runs it at every start"),
    (
        ".config/powershell/Microsoft.PowerShell_profile.ps1",
        "PowerShell runs it at every start",
    ),
    (".config/powershell/profile.ps1", "PowerShell runs it at every start"),
    // Terminals and window managers: the shell or programs they start are this file's.
    (".wezterm.lua", "WezTerm runs it (Lua) at every start"),
    (".config/wezterm/wezterm.lua", "WezTerm runs it (Lua) at every start"),
    (
        ".config/alacritty/alacritty.toml",
        "Alacritty starts the shell program it names in every window",
    ),
    (
        ".config/alacritty/alacritty.yml",
        "Alacritty starts the shell program it names in every window",
    ),
    (".config/i3/config", "i3 runs its `exec` lines at every login"),
    (".config/sway/config", "sway runs its `exec` lines at every login"),
    (
        ".config/hypr/hyprland.conf",
        "Hyprland runs its `exec-once` lines at every login",
    ),
];

const GRADLE_INIT: &str = "Gradle runs it before every build, in any project";

/// The part of the surface that wires an agent host's hooks, plugins and MCP servers — cordon's
/// own hook among them (`cordon install` writes these): an agent's file tool writing one could
/// unhook cordon for the next session, so `cordon hook` denies it outright. Each is the name of
/// an entry of [`TOOL_FILES`], [`HOME_FILES`] or [`TOOL_DIRS`] (a test holds it), matched at
/// the end of a path ([`host_settings`]).
pub const HOST_SETTINGS: &[&str] = &[
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".copilot/config.json",
    ".copilot/settings.json",
    ".copilot/settings.local.json",
    ".github/copilot/settings.json",
    ".github/copilot/settings.local.json",
    "opencode.json",
    "opencode.jsonc",
    "tui.json",
    "tui.jsonc",
    ".github/hooks",
    ".copilot/hooks",
    ".opencode/plugin",
    ".opencode/plugins",
    ".config/opencode/plugin",
    ".config/opencode/plugins",
];

/// The variables that move a host's home-relative settings directory elsewhere, and the
/// directory below the home each stands for: `$CODEX_HOME/hooks.json` is `~/.codex/hooks.json`.
pub const HOST_HOMES: &[(&str, &str)] = &[
    ("CODEX_HOME", ".codex"),
    ("COPILOT_HOME", ".copilot"),
    ("XDG_CONFIG_HOME", ".config"),
    // direnv's allow list and Helix's trusted workspaces (`HOME_DIRS`, `HOME_FILES`) move with
    // it: an allow entry written there runs a new `.envrc` unasked.
    ("XDG_DATA_HOME", ".local/share"),
    // opencode takes its global directory from here instead of `$XDG_CONFIG_HOME/opencode`.
    ("OPENCODE_CONFIG_DIR", ".config/opencode"),
];

/// Where `path` (absolute, as a host or its file tool names it) is one of the agent hosts'
/// settings ([`HOST_SETTINGS`]: the file, or any file in a directory of them), also where
/// `var` (the environment) moves a host's directory ([`HOST_HOMES`]); why it matters.
pub fn host_settings(
    path: &Path,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<&'static str> {
    let mut readings = vec![path.to_path_buf()];
    for (name, below_home) in HOST_HOMES {
        let Some(dir) = var(name)
            .map(std::path::PathBuf::from)
            .filter(|d| d.is_absolute())
        else {
            continue;
        };
        if let Ok(rest) = path.strip_prefix(&dir) {
            readings.push(Path::new(below_home).join(rest));
        }
    }
    readings.iter().find_map(|p| {
        HOST_SETTINGS.iter().find_map(|entry| {
            p.ancestors()
                .any(|a| a.ends_with(entry))
                .then(|| why_of(entry))
                .flatten()
        })
    })
}

/// Where `real` (absolute, links resolved) is one of the hosts' settings ([`HOST_SETTINGS`])
/// through a link the operator keeps (GNU stow's `~/.claude/settings.json ->
/// dots/claude.json`, a project's `.claude -> cfg`), a path no name marks: each entry at each
/// of `dirs` (the home, the directories from the host's working directory up), resolved, is
/// `real` or (a directory of them) holds it. Why it matters.
pub fn host_settings_linked(real: &Path, dirs: &[PathBuf]) -> Option<&'static str> {
    let mut links = cordon_fs::links::Links::default();
    for dir in dirs {
        for entry in HOST_SETTINGS {
            let named = dir.join(entry);
            let r = links.real(&named);
            if r != named && real.starts_with(&r) {
                return why_of(entry);
            }
        }
    }
    None
}

/// Variables of the operator's environment that name directories a program takes code from
/// at its ordinary start, every file below (a module in `PYTHONPATH` shadows the standard
/// library's at every `python` start, a library in `LD_LIBRARY_PATH` every program's), a list
/// as PATH is.
pub const ENV_LOAD_DIRS: &[&str] = &[
    "PYTHONPATH",
    "NODE_PATH",
    "PERL5LIB",
    "RUBYLIB",
    "LD_LIBRARY_PATH",
    "GIT_EXEC_PATH",
    "ZDOTDIR",
];

/// Variables of the operator's environment that name a file a program runs or sources at its
/// ordinary start, or a program run by path (the first word of a command).
pub const ENV_LOAD_FILES: &[&str] = &[
    "LD_PRELOAD",
    "BASH_ENV",
    "ENV",
    "PYTHONSTARTUP",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "PAGER",
    "GIT_PAGER",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SHELL",
];

const ENV_PATH_WHY: &str = "a directory on the operator's PATH: a program written here is taken by its name before the system's (a `git` here runs at the next `git`)";
const ENV_DIR_WHY: &str = "below a directory the operator's environment makes a program load code from (PYTHONPATH, LD_LIBRARY_PATH, NODE_PATH, ZDOTDIR, …): a file here is taken at that program's next start";
const ENV_FILE_WHY: &str = "a file the operator's environment names as one a program runs or sources (LD_PRELOAD, BASH_ENV, PYTHONSTARTUP, EDITOR, PAGER, GIT_SSH, …)";

/// What a place the operator's environment names is to a program that reads it
/// ([`environment_places`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvKind {
    /// A directory on the PATH: a program directly in it is taken by its name. Also one a
    /// shell startup file's loop sources every file of (`~/.bashrc.d/*`, [`startup`]): what
    /// runs is each file directly in it, the same way.
    PathDir,
    /// A directory of [`ENV_LOAD_DIRS`]: a file anywhere below it is loaded.
    LoadDir,
    /// A file of [`ENV_LOAD_FILES`]: run or sourced as it is.
    File,
}

/// One place the operator's environment names, absolute, as the variable writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvPlace {
    pub path: PathBuf,
    pub kind: EnvKind,
    pub why: &'static str,
}

/// The places the operator's environment (`var`, as cordon was started: a host's or the
/// operator's shell's) makes a program run outside any sandbox: each absolute directory on the
/// PATH, each of [`ENV_LOAD_DIRS`], and each file [`ENV_LOAD_FILES`] names (a command's first
/// word). Relative entries are left out (they name a different place from each directory;
/// direnv's `PATH_add` is [`named_by_envrc`]'s). The one reading of these variables: the file
/// tools' decision ([`named_by_environment`]) and the after-run scan take them from here.
pub fn environment_places(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Vec<EnvPlace> {
    let list = |name: &str| -> Vec<PathBuf> {
        var(name)
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default()
    };
    let mut out: Vec<EnvPlace> = list("PATH")
        .into_iter()
        .filter(|d| d.is_absolute())
        .map(|path| EnvPlace {
            path,
            kind: EnvKind::PathDir,
            why: ENV_PATH_WHY,
        })
        .collect();
    for name in ENV_LOAD_DIRS {
        out.extend(
            list(name)
                .into_iter()
                .filter(|d| d.is_absolute())
                .map(|path| EnvPlace {
                    path,
                    kind: EnvKind::LoadDir,
                    why: ENV_DIR_WHY,
                }),
        );
    }
    for name in ENV_LOAD_FILES {
        let Some(value) = var(name) else {
            continue;
        };
        let value = value.to_string_lossy().into_owned();
        // `LD_PRELOAD` is a list (spaces or colons); a command's program is its first word.
        let words: Vec<&str> = if *name == "LD_PRELOAD" {
            value.split([' ', ':']).collect()
        } else {
            value.split_whitespace().take(1).collect()
        };
        out.extend(
            words
                .into_iter()
                .map(|w| PathBuf::from(w.trim_matches(['"', '\''])))
                .filter(|p| p.is_absolute())
                .map(|path| EnvPlace {
                    path,
                    kind: EnvKind::File,
                    why: ENV_FILE_WHY,
                }),
        );
    }
    out
}

/// Where `real` (absolute, links resolved) is one of the [`environment_places`]: a program
/// directly in a directory on the PATH, a file below one of [`ENV_LOAD_DIRS`], or a file
/// [`ENV_LOAD_FILES`] names.
pub fn named_by_environment(
    real: &Path,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<Hit> {
    named_in(real, &environment_places(var))
}

/// Where `real` (absolute, links resolved) is what the operator's shell startup files under
/// `home` source, run by path or put on the PATH ([`startup::places`]).
pub fn named_at_startup(real: &Path, home: Option<&Path>) -> Option<Hit> {
    named_in(real, &startup::places(home?))
}

/// Where `real` is one of `places`, each taken as its [`EnvKind`] says.
fn named_in(real: &Path, places: &[EnvPlace]) -> Option<Hit> {
    let mut links = cordon_fs::links::Links::default();
    let hit = |why| {
        Some(Hit {
            kind: Kind::Pointed,
            why,
        })
    };
    // The PATH is long and set everywhere: its entries are compared with the written file's
    // directory by name, and by inode where both exist (an entry through a link), one `stat`
    // each instead of a walk of each entry's links.
    if let Some(parent) = real.parent() {
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let here = id(parent);
        for p in places.iter().filter(|p| p.kind == EnvKind::PathDir) {
            if cordon_fs::links::lexical(&p.path) == parent
                || (here.is_some() && id(&p.path) == here)
            {
                return hit(p.why);
            }
        }
    }
    for p in places.iter().filter(|p| p.kind == EnvKind::LoadDir) {
        if real.starts_with(links.real(&p.path)) {
            return hit(p.why);
        }
    }
    for p in places.iter().filter(|p| p.kind == EnvKind::File) {
        if links.real(&p.path) == real {
            return hit(p.why);
        }
    }
    None
}

const MOVED_HOME_WHY: &str = "in a directory the environment makes a host's home or the operator's configuration directory (`XDG_CONFIG_HOME`, `CODEX_HOME`, …): every file there configures a program of the operator's (git's global configuration in `$XDG_CONFIG_HOME/git/config`)";

/// Where `real` (absolute, links resolved) lies in a directory that `var` (the environment)
/// moves a part of the home to ([`HOST_HOMES`]: `$XDG_CONFIG_HOME` is `~/.config`): on the
/// home's surface there as at the home ([`classify_home`]), and as every file under a
/// dot-name of the home is to the file tools ([`home_dotted`]), asked whatever its name.
pub fn in_moved_home(real: &Path, var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<Hit> {
    let home = var("HOME").map(PathBuf::from).filter(|h| h.is_absolute());
    HOST_HOMES.iter().find_map(|(name, below_home)| {
        // Unset, the variable's place is its default under the home, the same directory:
        // a root of `~/.config` holds what `XDG_CONFIG_HOME=~/.config` names (round 11: there
        // `wezterm/wezterm.lua` was asked for with the variable set and allowed without it).
        let dir = var(name)
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .or_else(|| Some(home.as_ref()?.join(below_home)))
            .map(|d| std::fs::canonicalize(&d).unwrap_or(d))?;
        let rest = real.strip_prefix(&dir).ok()?;
        let rel = Path::new(below_home).join(rest);
        classify_home(&rel).or(Some(Hit {
            kind: Kind::Home,
            why: MOVED_HOME_WHY,
        }))
    })
}

/// The reason the surface gives for `entry`.
fn why_of(entry: &str) -> Option<&'static str> {
    TOOL_FILES
        .iter()
        .chain(HOME_FILES)
        .chain(TOOL_DIRS)
        .find(|(n, _)| *n == entry)
        .map(|(_, why)| *why)
}

/// Directories relative to the operator's home whose *every* file (at any depth) a program of
/// theirs runs or takes commands from at the next login, shell or editor start: a new file of
/// any name there is a plant. (User site-packages' `.pth` files, which every Python start runs,
/// lie under a versioned directory: the after-run scan looks for them by pattern, see
/// [`PYTHON_STARTUP`].)
pub const HOME_DIRS: &[(&str, &str)] = &[
    (
        ".config/systemd/user",
        "systemd starts the user units enabled here at the next login",
    ),
    (
        ".config/environment.d",
        "systemd sets these variables (LD_PRELOAD among them) for every user service",
    ),
    (
        ".config/autostart",
        "the desktop session runs each entry here at login",
    ),
    (
        ".config/fish/conf.d",
        "fish runs each file here in every shell",
    ),
    // Round 8 (redsurf21): the whole of an editor's configuration directory is code it runs:
    // `plugin/`, `after/`, `ftplugin/` at start or on opening a file, `autoload/` and Neovim's
    // `lua/` whatever `init.lua` requires.
    (".vim", "Vim runs the files here (plugin, after, ftplugin, autoload) at start and on opening a file"),
    (
        ".config/nvim",
        "Neovim runs the files here (init, plugin, after, ftplugin, lua modules init requires) at start and on opening a file",
    ),
    (".emacs.d", "Emacs loads the files here at every start"),
    (".config/emacs", "Emacs loads the files here at every start"),
    (
        ".config/fish/functions",
        "fish autoloads a function from here when a command of that name runs (`ls.fish` is `ls`)",
    ),
    // On the PATH of every login shell: Debian's `/etc/skel/.profile` puts `~/bin` and
    // `~/.local/bin` first when they exist (the real `bash -l` then took `~/.local/bin/git` for
    // `git`). (`~/bin` is the file tools' by [`home_dotted`]; as an entry here it would make
    // the shell analysis read every link to `/bin/…` as one to the home's surface.)
    (
        ".local/bin",
        "first on the PATH of every login shell (Debian's .profile): a program here is taken before the system's by name",
    ),
    // Checked with direnv 2.32: a file here is sourced before every `.envrc` (a new
    // `lib/x.sh` ran at the next `cd`), and an `allow/` entry is what lets an `.envrc` run.
    (
        ".config/direnv/lib",
        "direnv sources each file here before every .envrc",
    ),
    (
        ".local/share/direnv/allow",
        "direnv runs each .envrc an entry here allows",
    ),
    // jj 0.37 on keeps each repository's configuration here (`repos/ID/config.toml`, see
    // `JJ`), besides the operator's `config.toml` and `conf.d/`.
    (
        ".config/jj",
        "Jujutsu's configuration, each repository's too: the pager, editor and tools it runs",
    ),
    (
        ".ipython/profile_default/startup",
        "IPython runs each file here at every start",
    ),
    // Round 10: Gemini CLI reads extensions only from the home (`Storage(homedir())`) and
    // loads each at every start, in any folder: the MCP servers its `gemini-extension.json`
    // names start before the first prompt (Gemini CLI 0.61, checked: one a run left ran
    // `rm -rf keep` at the next `gemini`; `hosts_gemini.rs`), its hooks and commands with it.
    (
        ".gemini/extensions",
        "Gemini CLI loads each extension here at every start: the MCP servers, hooks and commands it names run without cordon's hook",
    ),
    // Round 10: Claude Code takes an enabled plugin's hooks, MCP servers, commands and agents
    // from where the files here say it is (`known_marketplaces.json`: a directory
    // marketplace's path; `installed_plugins.json`: `installPath`; the `cache/` and
    // `marketplaces/` copies), user-scoped or not (Claude Code 2.1.197, checked: a
    // `known_marketplaces.json` a run pointed at its own directory had the next `claude -p`
    // run that plugin's hook; `hosts_claude.rs`). Cost: Claude Code itself updating a
    // marketplace during a run whose root holds the home is reported and undone.
    (
        ".claude/plugins",
        "Claude Code runs the hooks and MCP servers of each enabled plugin from where the files here place it",
    ),
    // Round 11: Codex installs a plugin by copying it into `plugins/cache/MARKETPLACE/NAME/
    // VERSION` and starts the MCP servers its manifest (`.codex-plugin/plugin.json`, or
    // Claude Code's `.claude-plugin/plugin.json`, inline) or `.mcp.json` names from that copy
    // at every start, no trust asked (Codex 0.171, checked: a manifest a run rewrote there ran
    // `rm -rf keep` at the next `codex exec`; `hosts_codex.rs`). Its hooks need the
    // operator's review by hash; its skills are text.
    // Round 11: Copilot CLI keeps each installed plugin here (`_direct/NAME`,
    // `MARKETPLACE/NAME`) and starts the MCP servers its manifest names, with its hooks,
    // agents and LSP servers, at every start, no trust asked (Copilot CLI 1.0.102, checked: a
    // manifest a run rewrote ran `rm -rf keep` at the next `copilot -p`; `hosts_copilot.rs`).
    (
        ".copilot/installed-plugins",
        "GitHub Copilot CLI starts the MCP servers and runs the hooks of each installed plugin here at every start, without cordon's hook",
    ),
    (
        ".codex/plugins",
        "Codex starts the MCP servers of each installed plugin here at every start, without cordon's hook",
    ),
    // Round 9 (redsurf22): checked with the real bash-completion 2.11: a file named for a
    // command here ran when that command's completion was first asked for (a tab press).
    (
        ".local/share/bash-completion",
        "bash-completion sources the file named for a command here when that command is first completed (a tab press)",
    ),
    // From their documentation: a desktop entry here overrides the system's of that name (its
    // `Exec` runs when the operator starts that program from the menu); Jupyter runs its
    // `jupyter_*_config.py` files at every start.
    (
        ".local/share/applications",
        "a desktop entry here replaces the system's of that name: its `Exec` runs when the operator starts that program from the menu",
    ),
    (".jupyter", "Jupyter runs the `jupyter_*_config.py` files here at every start"),
    // Round 12 (redteam25), from each program's documentation (none installable here): fish
    // runs `vendor_conf.d` under its data directory as it runs `conf.d`, and autoloads
    // functions and completions (at a tab press, as bash-completion's) from these; Neovim's
    // runtimepath holds `site` (its `plugin/` and `pack/*/start/` run at every start);
    // systemd takes a user unit here before the system's of that name (`pipewire.service`
    // here replaces the one every login starts); Gradle runs each init script here before
    // every build; oh-my-zsh is zsh code sourced at every start (its `custom/*.zsh`, also
    // read from `~/.zshrc` by `surface::startup`); Plasma sources each `env/*.sh` at login;
    // kitty's configuration names the shell it starts and the kittens (Python) it runs.
    (
        ".local/share/fish/vendor_conf.d",
        "fish runs each file here in every shell",
    ),
    (
        ".local/share/fish/vendor_functions.d",
        "fish autoloads a function from here when a command of that name runs",
    ),
    (
        ".config/fish/completions",
        "fish runs the file named for a command here when that command is first completed (a tab press)",
    ),
    (
        ".local/share/nvim/site",
        "Neovim runs the plugins here (plugin, pack/*/start, ftplugin) at start and on opening a file",
    ),
    (
        ".local/share/systemd/user",
        "systemd takes a user unit here before the system's of that name (one every login starts)",
    ),
    (".gradle/init.d", GRADLE_INIT),
    (
        ".oh-my-zsh",
        "oh-my-zsh: zsh sources its files (lib, plugins, themes, custom) at every start",
    ),
    (
        ".config/plasma-workspace/env",
        "KDE Plasma sources each script here at every login",
    ),
    (
        ".config/kitty",
        "kitty starts the shell its configuration names in every window and runs the kittens (Python) here",
    ),
];

/// In a user site-packages directory (`~/.local/lib/pythonX.Y/site-packages`), what every start
/// of that Python runs: `*.pth` files (their `import` lines), `usercustomize.py`.
pub const PYTHON_STARTUP: &str =
    "every start of the operator's Python runs it (a .pth file's import lines, usercustomize)";

/// Whether `name`, in a user site-packages directory, is what Python runs at start.
pub fn python_startup(name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    name.ends_with(b".pth") || name == b"usercustomize.py" || name == b"sitecustomize.py"
}

/// cordon's own files by name, wherever they lie in a root: a policy found by discovery and
/// its remembered rules (used only when pinned in the trust store, but never the agent's to
/// write). The policy in use, its log and the stores are named by path by the caller.
pub const CORDON_FILES: &[(&str, &str)] = &[
    (
        "cordon.toml",
        "a cordon policy (discovery takes it from here once trusted)",
    ),
    (
        "cordon.rules.toml",
        "cordon's remembered rules (used beside a policy once trusted)",
    ),
];

const HOME_DOT_WHY: &str = "a dotfile or dot-directory of the operator's home (or `~/bin`): the home's surface is every program's configuration, more than any list names, so a file tool's write there is asked whatever the name";

/// Where `rel`, relative to the operator's home, is under one of its dot-names (`.config/…`,
/// `.kube/…`) or `bin/`: what configures or runs every program of the operator's, more than
/// [`HOME_FILES`] and [`HOME_DIRS`] can list. The file tools ask for every such write where a root holds the home (an
/// agent's work at the home lies in its projects); the after-run scan keeps to the lists, as a
/// command's own caches and histories there change in normal work.
pub fn home_dotted(rel: &Path) -> Option<Hit> {
    let first = rel.components().next()?;
    let Component::Normal(first) = first else {
        return None;
    };
    let first = first.as_encoded_bytes();
    (first.starts_with(b".") || first == b"bin").then_some(Hit {
        kind: Kind::Home,
        why: HOME_DOT_WHY,
    })
}

/// Where `rel`, relative to the operator's home, lies on the home's surface ([`HOME_FILES`],
/// a file in [`HOME_DIRS`], a user site-packages' startup file).
pub fn classify_home(rel: &Path) -> Option<Hit> {
    let hit = |why| Hit {
        kind: Kind::Home,
        why,
    };
    if let Some((_, why)) = HOME_FILES.iter().find(|(name, _)| rel == Path::new(name)) {
        return Some(hit(why));
    }
    if let Some((_, why)) = HOME_DIRS.iter().find(|(d, _)| rel.starts_with(d)) {
        return Some(hit(why));
    }
    let parts: Vec<_> = rel.components().collect();
    let site = parts.len() == 5
        && rel.starts_with(".local/lib")
        && parts[2]
            .as_os_str()
            .as_encoded_bytes()
            .starts_with(b"python")
        && parts[3].as_os_str() == "site-packages"
        && python_startup(parts[4].as_os_str());
    site.then(|| hit(PYTHON_STARTUP))
}

/// Where `real` (a path with every link resolved, as the file tools write it) is an entry of
/// the home's surface reached through a link — [`HOME_FILES`], [`TOOL_FILES`] or a file in
/// [`TOOL_DIRS`] or [`HOME_DIRS`] at `home` (canonical) — on the way or at its end: with
/// `~/.config -> dotfiles/config`, `dotfiles/config/git/config` is git's global configuration,
/// and with GNU stow's `~/.bashrc -> dotfiles/bashrc`, `dotfiles/bashrc` is what bash runs
/// (also before it exists: a write through a dangling link creates it), paths no name marks.
/// Wherever `real` lies: the dotfiles kept outside the home (`/work/dotfiles`) too. And a
/// file below what a link at a dot-name of the home puts in `root` ([`home_dot_links`]).
pub fn classify_home_real(home: &Path, real: &Path, root: &Path) -> Option<Hit> {
    home_linked(home)
        .into_iter()
        .find(|l| {
            if l.dir {
                real.starts_with(&l.real)
            } else {
                l.real == real
            }
        })
        .map(|l| Hit {
            kind: l.kind,
            why: l.why,
        })
        .or_else(|| {
            // (Not a link that names the root or a directory above it: the operator made a
            // root of that, a project of its own, as a root under `~/.dotfiles` is.)
            home_dot_links(home)
                .iter()
                .any(|t| real.starts_with(t) && !root.starts_with(t))
                .then_some(Hit {
                    kind: Kind::Home,
                    why: HOME_DOT_WHY,
                })
        })
}

/// Where the operator's links at the home's own names put its configuration: the targets of
/// the links at a dot-name of the home or `~/bin`, and at a name directly in `~/.config`,
/// `~/.local/share` or `~/.local/bin` (`~/.config/ghostty -> ~/dots/ghostty`, a tool no list
/// names). What lies below one is the home's configuration, as a file under a dot-name of the
/// home is ([`home_dotted`]): the file tools ask for it wherever it lies. One listing of each
/// of those directories, a `readlink` per link.
pub fn home_dot_links(home: &Path) -> Vec<PathBuf> {
    let mut links = cordon_fs::links::Links::default();
    let mut out = Vec::new();
    let mut scan = |dir: &Path, any_name: bool| {
        let Ok(list) = std::fs::read_dir(dir) else {
            return;
        };
        for e in list.flatten() {
            let name = e.file_name();
            let dotted = name.as_encoded_bytes().starts_with(b".") || name == "bin";
            if (any_name || dotted) && e.file_type().is_ok_and(|t| t.is_symlink()) {
                out.push(links.real(&e.path()));
            }
        }
    };
    scan(home, false);
    for sub in [".config", ".local/share", ".local/bin"] {
        let dir = home.join(sub);
        // (Itself a link: its target is what the home's listing found.)
        if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            scan(&dir, true);
        }
    }
    out
}

/// An entry of the home's surface that the operator's links put elsewhere ([`home_linked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeLinked {
    /// Where it really is.
    pub real: PathBuf,
    /// A directory whose every file is on the surface ([`HOME_DIRS`], [`TOOL_DIRS`]).
    pub dir: bool,
    pub kind: Kind,
    pub why: &'static str,
}

/// Each entry of the home's surface ([`HOME_FILES`], [`TOOL_FILES`], [`HOME_DIRS`],
/// [`TOOL_DIRS`] at `home`, canonical) that a link on the way or at its end puts elsewhere,
/// where it really is: one walk of the links (each name looked up once), the entries the
/// operator keeps in a dotfiles checkout. The file tools ask for a write there; the after-run
/// scan watches those that lie in a root when the home itself is in none.
pub fn home_linked(home: &Path) -> Vec<HomeLinked> {
    use std::collections::HashMap;
    // Most entries are not there, and most that are hold no link: one listing of the home,
    // then an `lstat` per name on the way below a directory that is there (each once), and
    // the walk of the links only for an entry with a link on its way.
    let Ok(list) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    // name on the way → whether it is a link (`None`: not there)
    let mut names: HashMap<PathBuf, Option<bool>> = list
        .flatten()
        .map(|e| {
            let link = e.file_type().is_ok_and(|t| t.is_symlink());
            (home.join(e.file_name()), Some(link))
        })
        .collect();
    let mut linked_on_the_way = |rel: &str| {
        let mut at = home.to_path_buf();
        for (i, part) in rel.split('/').enumerate() {
            at.push(part);
            let known = match names.get(&at) {
                Some(k) => *k,
                // (The home's own names are all known from its listing.)
                None if i == 0 => None,
                None => {
                    let k = std::fs::symlink_metadata(&at)
                        .ok()
                        .map(|m| m.file_type().is_symlink());
                    names.insert(at.clone(), k);
                    k
                }
            };
            match known {
                None => return false,
                Some(true) => return true,
                Some(false) => {}
            }
        }
        false
    };
    let mut links = cordon_fs::links::Links::default();
    let files = HOME_FILES
        .iter()
        .map(|e| (e, Kind::Home, false))
        .chain(TOOL_FILES.iter().map(|e| (e, Kind::Tool, false)));
    let dirs = TOOL_DIRS
        .iter()
        .map(|e| (e, Kind::Tool, true))
        .chain(HOME_DIRS.iter().map(|e| (e, Kind::Home, true)));
    files
        .chain(dirs)
        .filter_map(|((rel, why), kind, dir)| {
            if !linked_on_the_way(rel) {
                return None;
            }
            let named = home.join(rel);
            let real = links.real(&named);
            (real != named).then_some(HomeLinked {
                real,
                dir,
                kind,
                why,
            })
        })
        .collect()
}

/// What part of the surface a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `.git` directory, gitdir file or link itself, or a path inside a git directory's
    /// configuration surface ([`GIT_CONFIG`]).
    Git,
    /// One of [`TOOL_FILES`].
    Tool,
    /// One of [`CORDON_FILES`].
    Cordon,
    /// A todo list of an interrupted rebase or cherry-pick ([`GIT_TODO_LISTS`]): git's working
    /// state, which the kernel does not keep read-only, asked for.
    GitTodo,
    /// One of [`HOME_FILES`], at the operator's home.
    Home,
    /// What the surface points at, outside the names above: the directory a repository's
    /// `core.hooksPath` names, a file its configuration includes ([`named_by_git_config`]),
    /// the file or directory a link of the surface resolves to ([`linked_from_surface`]).
    Pointed,
}

/// A path on the surface: which part, and why it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub kind: Kind,
    pub why: &'static str,
}

const GIT_DIR_WHY: &str = "git finds a repository here and runs its config (a gitlink, a shell prompt or a `git status` in this directory is enough)";

/// Whether `rel`, a path below a git directory, is in its configuration surface.
fn git_config(rel: &[&str]) -> Option<&'static str> {
    GIT_CONFIG.iter().find_map(|(name, why)| {
        let parts: Vec<&str> = name.split('/').collect();
        (rel.len() >= parts.len() && rel[..parts.len()] == parts[..]).then_some(*why)
    })
}

/// Whether `rel`, a path below a git directory, is one of its todo lists ([`GIT_TODO_LISTS`],
/// also in `modules/NAME/` and `worktrees/NAME/`): asked, as git's working state the kernel
/// does not keep read-only.
fn git_todo(rel: &[&str]) -> Option<Hit> {
    let rel = rel.join("/");
    GIT_TODO_LISTS
        .iter()
        .any(|t| rel == *t || rel.ends_with(&format!("/{t}")))
        .then_some(Hit {
            kind: Kind::GitTodo,
            why: GIT_TODO_WHY,
        })
}

/// Where `rel` (a path relative to a writable root, as the file tools resolved it: no `..`)
/// lies on the surface, if it does. `is_git_dir(prefix)` says whether a directory of the root
/// (relative to it) is a bare repository (git takes it for one: `HEAD`, `objects/`, `refs/`),
/// so that `ev/config` of a bare repository `ev` is found too.
pub fn classify(rel: &Path, is_git_dir: &dyn Fn(&Path) -> bool) -> Option<Hit> {
    let parts: Vec<&str> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_str().unwrap_or("\u{fffd}")),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    // Inside (or at) a `.git` anywhere: `sub/.git/config` as much as `.git/config`.
    if let Some(i) = parts.iter().position(|p| *p == ".git") {
        let below = &parts[i + 1..];
        if below.is_empty() {
            return Some(Hit {
                kind: Kind::Git,
                why: GIT_DIR_WHY,
            });
        }
        // The rest (objects, refs, index, HEAD) is git's working state: not run by git,
        // but for a todo list's `exec` lines at the operator's `--continue`.
        return git_config(below)
            .map(|why| Hit {
                kind: Kind::Git,
                why,
            })
            .or_else(|| git_todo(below));
    }
    // Inside a bare repository of the root.
    for i in 0..parts.len() {
        let dir: std::path::PathBuf = parts[..i].iter().collect();
        if is_git_dir(&dir) {
            if let Some(why) = git_config(&parts[i..]) {
                return Some(Hit {
                    kind: Kind::Git,
                    why,
                });
            }
            if let Some(hit) = git_todo(&parts[i..]) {
                return Some(hit);
            }
        }
    }
    let name = parts[parts.len() - 1];
    if let Some((_, why)) = CORDON_FILES.iter().find(|(n, _)| *n == name) {
        return Some(Hit {
            kind: Kind::Cordon,
            why,
        });
    }
    // A tool file (`.vscode/tasks.json`) or a settings directory itself (`.claude`: deleting
    // or replacing it is replacing what is inside).
    // (The entries are compared name by name as they are split, never collected: this runs
    // for each path of each shell line the hook decides, over every entry.)
    for (tool, why) in TOOL_FILES {
        if ends_with(&parts, tool) {
            return Some(Hit {
                kind: Kind::Tool,
                why,
            });
        }
    }
    if let Some(why) = tool_suffix(name.as_bytes()) {
        return Some(Hit {
            kind: Kind::Tool,
            why,
        });
    }
    // A file in a directory whose every file a tool runs (`.github/hooks/x.json`), or that
    // directory itself.
    for (tool, why) in TOOL_DIRS {
        if (0..parts.len()).any(|i| starts_with(&parts[i..], tool.split('/'))) {
            return Some(Hit {
                kind: Kind::Tool,
                why,
            });
        }
    }
    // A directory on the way to one of them (`.claude`, `.vscode`, `.github/copilot`): writing,
    // moving or linking it writes what is inside (`mv x .claude` makes `x/settings.json`
    // Claude Code's settings).
    for (tool, why) in TOOL_FILES.iter().chain(TOOL_DIRS) {
        let names = tool.split('/').count();
        if (1..names).any(|k| {
            parts.len() >= k && starts_with(&parts[parts.len() - k..], tool.split('/').take(k))
        }) {
            return Some(Hit {
                kind: Kind::Tool,
                why,
            });
        }
    }
    None
}

/// What of the surface a [`Within`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithinKind {
    /// One file ([`TOOL_FILES`], [`HOME_FILES`]).
    File,
    /// A directory whose every file is on the surface ([`TOOL_DIRS`], [`HOME_DIRS`], a git
    /// directory's `hooks`), or git's configuration there (`config`): watched whole.
    Dir,
    /// A git directory: the root itself is one (a bare repository, a `.git`).
    GitDir,
}

/// An entry of the surface that the names *above* a writable root put inside it
/// ([`within_root`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Within {
    /// Where it is: inside the root, or the root itself.
    pub path: PathBuf,
    pub what: WithinKind,
    pub kind: Kind,
    pub why: &'static str,
}

/// The surface that the names above `root` (absolute, canonical) put inside it, which a walk
/// of the root by the names below it cannot see: with the root `/p/.claude`, its
/// `settings.json` is Claude Code's settings; with `/p/.git/hooks`, or a bare repository
/// `/srv/r.git`, or `/p/.git` itself, each hook is git's; with `~/.config/nvim` below the
/// operator's `home` (canonical), every file is Neovim's. The file tools see these by
/// classifying the whole path too (`cordon_tools::files`); the after-run scan watches them
/// from this list. Names are compared (as written and as a file system that ignores case reads
/// them); each directory from the root up gets the `lstat`s that tell a git directory.
pub fn within_root(root: &Path, home: Option<&Path>) -> Vec<Within> {
    let mut out = Vec::new();
    let names: Vec<String> = root
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_str().unwrap_or("\u{fffd}").to_string()),
            _ => None,
        })
        .collect();
    let folded_names: Vec<String> = names
        .iter()
        .map(|n| {
            folded(Path::new(n))
                .and_then(|f| f.to_str().map(str::to_string))
                .unwrap_or_else(|| n.clone())
        })
        .collect();
    let same = |from: usize, to: usize, entry: &[&str]| {
        let as_is: Vec<&str> = names[from..to].iter().map(String::as_str).collect();
        let fold: Vec<&str> = folded_names[from..to].iter().map(String::as_str).collect();
        names_are(&as_is, entry) || names_are(&fold, entry)
    };
    // A tool's entry begun in a directory above the root, `names[i..]` the names from there
    // down to the root: what is left of the entry lies inside the root (`.claude` +
    // `settings.json`), or the root lies inside a directory whose every file is read.
    let tools = TOOL_FILES
        .iter()
        .map(|e| (e, WithinKind::File))
        .chain(TOOL_DIRS.iter().map(|e| (e, WithinKind::Dir)));
    for ((entry, why), what) in tools {
        let e: Vec<&str> = entry.split('/').collect();
        for i in 0..names.len() {
            let below = names.len() - i;
            let path = if e.len() > below && same(i, names.len(), &e[..below]) {
                root.join(e[below..].join("/"))
            } else if what == WithinKind::Dir && below >= e.len() && same(i, i + e.len(), &e) {
                root.to_path_buf()
            } else {
                continue;
            };
            let what = if path == root { WithinKind::Dir } else { what };
            out.push(Within {
                path,
                what,
                kind: Kind::Tool,
                why,
            });
        }
    }
    // A git directory at or above the root: its configuration inside the root.
    for dir in root.ancestors() {
        let named = dir.file_name().is_some_and(|n| n == ".git")
            && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
        if !named && !looks_like_git_dir(dir) {
            continue;
        }
        if dir == root {
            out.push(Within {
                path: root.to_path_buf(),
                what: WithinKind::GitDir,
                kind: Kind::Git,
                why: GIT_DIR_WHY,
            });
            continue;
        }
        for (entry, why) in GIT_CONFIG {
            let p = dir.join(entry);
            let path = if p.starts_with(root) {
                p
            } else if root.starts_with(&p) {
                root.to_path_buf()
            } else {
                continue;
            };
            out.push(Within {
                path,
                what: WithinKind::Dir,
                kind: Kind::Git,
                why,
            });
        }
    }
    // The home's surface, where the root lies below the home (`~/.ssh`, `~/.config/nvim`).
    let below_home = home.and_then(|h| Some((h, root.strip_prefix(h).ok()?)));
    if let Some((home, rel)) = below_home.filter(|(_, rel)| !rel.as_os_str().is_empty()) {
        let entries = HOME_FILES
            .iter()
            .map(|e| (e, WithinKind::File))
            .chain(HOME_DIRS.iter().map(|e| (e, WithinKind::Dir)));
        for ((entry, why), what) in entries {
            let p = home.join(entry);
            let path = if p.starts_with(root) && p != root {
                p
            } else if what == WithinKind::Dir && rel.starts_with(entry) {
                root.to_path_buf()
            } else {
                continue;
            };
            let what = if path == root { WithinKind::Dir } else { what };
            out.push(Within {
                path,
                what,
                kind: Kind::Home,
                why,
            });
        }
    }
    out
}

/// Whether `name` (as on disk, or as [`folded`] reads it) is the list's `entry` name: as
/// written, or folded as the name is (R's `.Rprofile` is `.rprofile` to a file system that
/// ignores case, which opens it for `.RPROFILE`). Only an entry with an upper-case letter
/// costs a fold.
pub fn name_is(name: &str, entry: &str) -> bool {
    name == entry
        || (entry.bytes().any(|c| c.is_ascii_uppercase())
            && folded(Path::new(entry)).is_some_and(|f| f.as_os_str() == name))
}

/// Whether `parts` end with the names of `entry` (`a/b`), each as [`name_is`] compares them.
fn ends_with(parts: &[&str], entry: &str) -> bool {
    let mut p = parts.iter().rev();
    entry
        .rsplit('/')
        .all(|e| p.next().is_some_and(|n| name_is(n, e)))
}

/// Whether `parts` begin with the names `entry` gives, each as [`name_is`] compares them.
fn starts_with<'a>(parts: &[&str], entry: impl Iterator<Item = &'a str>) -> bool {
    let mut p = parts.iter();
    let mut entry = entry;
    entry.all(|e| p.next().is_some_and(|n| name_is(n, e)))
}

/// [`name_is`] for each name of two paths' parts.
fn names_are(names: &[&str], entry: &[&str]) -> bool {
    names.len() == entry.len() && names.iter().zip(entry).all(|(n, e)| name_is(n, e))
}

const ENVRC_WHY: &str = "an `.envrc` above it names it: direnv checks only the `.envrc` itself, so what it sources, reads (`dotenv`), runs or puts on the PATH is taken as it is at the next `cd`";
const ENVRC_UNREADABLE_WHY: &str =
    "an `.envrc` above it cannot be read, so that it names this file cannot be ruled out";

/// Where `real` (absolute, links resolved, as the file tools write it) is what an `.envrc`
/// in a directory above it names ([`envrc`]): a file it sources or reads, a program it runs,
/// a directory it puts on the PATH, a Nix file `use flake` evaluates. Every `.envrc` up to
/// `/` counts (the operator may `cd` into any of their directories); one that cannot be read
/// is a hit.
pub fn named_by_envrc(real: &Path, home: Option<&Path>) -> Option<Hit> {
    let hit = |why| {
        Some(Hit {
            kind: Kind::Pointed,
            why,
        })
    };
    for dir in real.ancestors().skip(1) {
        // Never blocking on a FIFO a run left there: that is unreadable.
        let file = dir.join(".envrc");
        let text = match cordon_fs::safe::read_followed(&file, 1 << 20) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            // (A directory, `.envrc/`, is nothing direnv loads.)
            Err(_) if file.is_dir() => continue,
            Err(_) => return hit(ENVRC_UNREADABLE_WHY),
        };
        if envrc::names(&envrc::read(&text, dir, home), dir, real) {
            return hit(ENVRC_WHY);
        }
    }
    None
}

const DOTENV_WHY: &str = "the operator's direnv loads `.env` files (`load_dotenv = true`) as it runs `.envrc`: its variables (PATH, LD_PRELOAD, BASH_ENV) are the next shell's in this directory";

/// Whether the operator's direnv loads a directory's `.env` as it runs an `.envrc`: its
/// configuration (`$DIRENV_CONFIG`, else `$XDG_CONFIG_HOME/direnv`, else `~/.config/direnv`;
/// `direnv.toml`, or `config.toml` up to 2.21) sets `[global] load_dotenv = true`. Checked
/// with direnv 2.32: a `.env` alone is then taken at `cd` once allowed, and under a
/// `[whitelist] prefix` a changed one without asking. A configuration that cannot be read or
/// parsed counts as setting it (direnv's reading cannot be ruled out).
pub fn dotenv_by_direnv(
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    let dir = var("DIRENV_CONFIG")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CONFIG_HOME").map(|c| PathBuf::from(c).join("direnv")))
        .or_else(|| home.map(|h| h.join(".config/direnv")));
    let Some(dir) = dir.filter(|d| d.is_absolute()) else {
        return false;
    };
    ["direnv.toml", "config.toml"].iter().any(|name| {
        match cordon_fs::safe::read_followed(&dir.join(name), 1 << 20) {
            Ok(None) => false,
            Ok(Some(text)) => String::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<toml::Table>().ok())
                .is_none_or(|doc| {
                    doc.get("global")
                        .and_then(|g| g.get("load_dotenv"))
                        .and_then(toml::Value::as_bool)
                        .unwrap_or(false)
                }),
            Err(e) => !e.is_not_found(),
        }
    })
}

/// Where `real` (absolute, links resolved) is a `.env` the operator's direnv loads
/// ([`dotenv_by_direnv`]).
pub fn named_dotenv(
    real: &Path,
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<Hit> {
    (real.file_name().is_some_and(|n| n == ".env") && dotenv_by_direnv(home, var)).then_some(Hit {
        kind: Kind::Tool,
        why: DOTENV_WHY,
    })
}

/// Why a `.env` is watched where the operator's direnv loads it.
pub const DOTENV_BY_DIRENV_WHY: &str = DOTENV_WHY;

/// The directories a `.tool-versions` (`node path:./tools/node`) or a mise configuration
/// (`[env] _.path = ["./bin"]`) puts on the PATH of a shell entering its directory, as written.
/// A mise file that is no TOML names none (mise refuses it).
fn path_dirs(entry: &str, text: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(text);
    if entry == ".tool-versions" {
        return text
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("path:"))
            .map(str::to_owned)
            .collect();
    }
    if !TOOL_FILES
        .iter()
        .any(|(e, why)| *e == entry && *why == MISE)
    {
        return Vec::new();
    }
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    // `[env] _.path = …` and `[[env]] _.path = …`, a string or a list; a list entry may be a
    // table with its `path`.
    let envs = match doc.get("env") {
        Some(toml::Value::Array(a)) => a.iter().collect(),
        Some(v) => vec![v],
        None => Vec::new(),
    };
    for env in envs {
        let path = env.get("_").and_then(|u| u.get("path"));
        let items = match path {
            Some(toml::Value::Array(a)) => a.iter().collect(),
            Some(v) => vec![v],
            None => Vec::new(),
        };
        for item in items {
            match item {
                toml::Value::String(d) => dirs.push(d.clone()),
                toml::Value::Table(t) => {
                    dirs.extend(t.get("path").and_then(|p| p.as_str()).map(str::to_owned))
                }
                _ => {}
            }
        }
    }
    dirs
}

/// How many files of one settings directory [`named_by_configuration`] reads, and how many
/// bytes of them in all (a file past what is left is not read).
pub const DIR_FILES: usize = 64;
const DIR_BYTES: u64 = 1 << 20;

const CONFIGURED_WHY: &str = "a configuration on the surface names it (a hook's, a task's, a runner's or git's program, a file it loads): the program reading that configuration runs or reads it outside the sandbox";

/// Where `real` (absolute, links resolved) is a file a configuration on the surface names by
/// a literal path ([`envrc::names_literally`], exact matches): each [`TOOL_FILES`] entry present in a
/// directory above `real` (a Claude Code hook's `"$CLAUDE_PROJECT_DIR"/tools/guard.sh`,
/// `.pre-commit-config.yaml`'s `entry: ./scripts/lint.sh`, `.yarnrc.yml`'s `yarnPath`,
/// `.cargo/config.toml`'s `runner`), a word taken from that directory (where the hosts run
/// their hooks and tasks) and from the file's own; and each repository's configuration whose
/// work tree holds `real`, from its top (checked with git 2.47: `core.fsmonitor =
/// scripts/fsmon.sh` ran from the top at a `git status` in a subdirectory; so do filters,
/// aliases, pagers). The files of a [`TOOL_DIRS`] directory there are read the same way (the
/// first [`DIR_FILES`] by name, not below it). Every file below a marketplace directory
/// Claude Code takes plugins from in place, as a Claude Code settings file above `real` or the
/// home's own files name it ([`hooks::marketplaces`]), and below a Gemini CLI extension the
/// home links ([`hooks::home_plugin_sources`]). Not seen: a path a configuration
/// computes, the files a named script itself loads.
pub fn named_by_configuration(real: &Path, home: Option<&Path>) -> Option<Hit> {
    /// Configurations are small; a larger file is not read.
    const MAX: u64 = 1 << 20;
    // (Never blocking on a FIFO a run left at a configuration's name.)
    let read = |p: &Path| cordon_fs::safe::read_followed(p, MAX).ok().flatten();
    let hit = Some(Hit {
        kind: Kind::Pointed,
        why: CONFIGURED_WHY,
    });
    let marketplace = Some(Hit {
        kind: Kind::Pointed,
        why: hooks::MARKETPLACE_WHY,
    });
    // Where the home's own files place code a host runs in place (wherever that is).
    if let Some(why) = home.and_then(|h| hooks::home_plugin_sources(h).holding(real)) {
        return Some(Hit {
            kind: Kind::Pointed,
            why,
        });
    }
    for dir in real.ancestors().skip(1) {
        // One listing per directory, then only the entries whose first name is there (an
        // open per entry and directory cost about 350 failed opens a write).
        let Ok(list) = std::fs::read_dir(dir) else {
            continue;
        };
        let first = |entry: &str| entry.split('/').next().unwrap_or("").to_owned();
        let wanted: Vec<String> = TOOL_FILES
            .iter()
            .chain(TOOL_DIRS)
            .map(|(e, _)| first(e))
            .chain([".git".into(), "HEAD".into()])
            .collect();
        let here: Vec<String> = list
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| wanted.contains(n))
            .collect();
        for (entry, _) in TOOL_FILES.iter().filter(|(e, _)| here.contains(&first(e))) {
            let file = dir.join(entry);
            if file == real {
                continue;
            }
            let Some(text) = read(&file) else {
                continue;
            };
            let own = file.parent().unwrap_or(dir);
            if envrc::names_literally(&text, &[dir, own], home, dir, real) {
                return hit;
            }
            // A marketplace directory whose plugins Claude Code runs in place.
            if hooks::MARKETPLACE_SETTINGS.contains(entry)
                && hooks::marketplaces(entry, &text, dir)
                    .iter()
                    .any(|m| real.starts_with(resolve(m)))
            {
                return marketplace;
            }
            // A directory put first on the PATH names every file below it: `.tool-versions`'
            // `path:` versions (mise, asdf: its `bin`), mise's `[env] _.path`.
            if path_dirs(entry, &text).iter().any(|d| {
                // (mise's template for the project's directory.)
                let d = d.strip_prefix("{{config_root}}").unwrap_or(d);
                real.starts_with(envrc::normal(&dir.join(d.trim_start_matches('/'))))
            }) {
                return hit;
            }
        }
        // The files of a directory whose every file a tool runs (a Copilot hook's
        // `"bash": "./scripts/audit.sh"` in `.github/hooks/x.json`, a husky hook running
        // `./scripts/check.sh`): its own files, the first [`DIR_FILES`] by name.
        for (entry, _) in TOOL_DIRS.iter().filter(|(e, _)| here.contains(&first(e))) {
            let tool_dir = dir.join(entry);
            let Ok(list) = std::fs::read_dir(&tool_dir) else {
                continue;
            };
            let mut files: Vec<PathBuf> = list.flatten().map(|e| e.path()).collect();
            files.sort();
            // (A bounded read: an IDE's `.idea/` holds large files, and this runs on every
            // write.)
            let mut budget = DIR_BYTES;
            for file in files.iter().take(DIR_FILES).filter(|f| f.as_path() != real) {
                let Some(text) = cordon_fs::safe::read_followed(file, budget).ok().flatten() else {
                    continue;
                };
                budget -= text.len() as u64;
                if envrc::names_literally(&text, &[dir, &tool_dir], home, dir, real) {
                    return hit;
                }
            }
        }
        let repository = here.iter().any(|n| n == ".git" || n == "HEAD");
        let found = if repository {
            repository_at(dir)
        } else {
            Ok(None)
        };
        if let Ok(Some((git_dir, top))) = found {
            for file in git_config::repository_files(&git_dir).unwrap_or_default() {
                let Some(text) = read(&file) else {
                    continue;
                };
                if envrc::names_literally(&text, &[&top], home, &top, real) {
                    return hit;
                }
            }
        }
    }
    None
}

const HOOKS_PATH_WHY: &str = "git runs every hook in the directory a repository's `core.hooksPath` names (at the next commit, checkout, merge or push)";
const INCLUDED_WHY: &str =
    "git reads it as configuration: a repository's or the operator's git configuration includes it (`include.path`, `includeIf`)";
const OPERATORS_WHY: &str = "git reads it as the operator's own configuration in every repository (where `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM` or `XDG_CONFIG_HOME` put it)";
const UNREADABLE_WHY: &str = "git's configuration of a repository holding it cannot be read with certainty, so a `core.hooksPath` or include naming it cannot be ruled out";

/// Where `real` (absolute, the links on the way resolved, as the file tools write it) is what
/// git configuration points at outside a git directory: inside the directory `core.hooksPath`
/// names, or a file an include names. Read as git reads it ([`git_config`]) from the
/// operator's files ([`git_config::operator_files`]) and environment
/// ([`git_config::environment`]), whose absolute hooks directory is every repository's, and
/// from each repository whose work tree (or bare git directory) holds `real`, nearest or not
/// (`sub/.githooks` may be the hooks of the repository around `sub`'s). What cannot be read
/// with certainty is a hit too. Not seen: a repository elsewhere naming `real` by an absolute
/// or `../` path, or by a `core.worktree` that puts its work tree elsewhere.
pub fn named_by_git_config(
    real: &Path,
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<Hit> {
    use git_config::{read, repository_files, Named};
    let hit = |why| {
        Some(Hit {
            kind: Kind::Pointed,
            why,
        })
    };
    let mut operator = Named::default();
    for f in git_config::operator_files(home, var) {
        // The operator's own file itself, where the environment puts it in a root
        // (`GIT_CONFIG_GLOBAL=/work/proj/gitconfig`): git reads it in every repository.
        if resolve(&f) == real {
            return hit(OPERATORS_WHY);
        }
        if read(&f, home, &mut operator, 0).is_err() {
            return hit(UNREADABLE_WHY);
        }
    }
    if git_config::environment(home, var, &mut operator).is_err() {
        return hit(UNREADABLE_WHY);
    }
    let included = |named: &Named| named.includes.iter().any(|i| resolve(i) == real);
    let hooks_at = |named: &Named, top: &Path| {
        named
            .hooks
            .iter()
            .find_map(|h| in_hooks_dir(real, &top.join(h)))
    };
    if included(&operator) {
        return hit(INCLUDED_WHY);
    }
    // The operator's absolute (or `~/`) hooks directory is every repository's, wherever the
    // written file is: inside a repository or not (a root that is none; git runs them from a
    // commit in any repository).
    if let Some(why) = operator
        .hooks
        .iter()
        .filter(|h| h.is_absolute())
        .find_map(|h| in_hooks_dir(real, h))
    {
        return hit(why);
    }
    let at_top = git_config::operator_files_at_top(var);
    for dir in real.ancestors().skip(1) {
        let (git_dir, top) = match repository_at(dir) {
            Ok(Some(found)) => found,
            Ok(None) => continue,
            Err(()) => return hit(UNREADABLE_WHY),
        };
        // The operator's global files kept at this repository's top (a relative
        // `GIT_CONFIG_GLOBAL`): its configuration as much as its own `config`.
        let global_here: Vec<PathBuf> = at_top.iter().map(|f| top.join(f)).collect();
        if global_here.iter().any(|f| resolve(f) == real) {
            return hit(INCLUDED_WHY);
        }
        let mut named = Named::default();
        let read_all = repository_files(&git_dir).and_then(|files| {
            files
                .iter()
                .chain(&global_here)
                .try_for_each(|f| read(f, home, &mut named, 0))
        });
        if read_all.is_err() {
            return hit(UNREADABLE_WHY);
        }
        if included(&named) {
            return hit(INCLUDED_WHY);
        }
        // The top git runs hooks at: the directory holding `.git`, or where `core.worktree`
        // moves it (relative to the git directory).
        let tops = std::iter::once(top).chain(named.worktrees.iter().map(|w| git_dir.join(w)));
        for top in tops {
            if let Some(why) = hooks_at(&named, &top).or_else(|| hooks_at(&operator, &top)) {
                return hit(why);
            }
        }
    }
    None
}

/// Whether `real` is what git runs as a hook from the hooks directory `dir`: a file in it, or
/// what a link in it resolves to (`.githooks/pre-commit -> ../scripts/lint.sh`: git runs the
/// linked script); why. A directory too large to list ([`links_below`]) is a hit too.
fn in_hooks_dir(real: &Path, dir: &Path) -> Option<&'static str> {
    if real.starts_with(resolve(dir)) {
        return Some(HOOKS_PATH_WHY);
    }
    match links_below(dir) {
        Some(links) => links
            .iter()
            .map(|l| resolve(l))
            .any(|t| t == real || real.starts_with(&t))
            .then_some(HOOKS_PATH_WHY),
        None => Some(LINKS_UNLISTED_WHY),
    }
}

/// The repository at `dir`: its git directory and the directory hooks run in (the work
/// tree's top; a bare repository's git directory). `.git` a directory, a link to one, or a
/// gitfile (`gitdir: PATH`); else `dir` itself when git takes it for a bare repository.
fn repository_at(dir: &Path) -> Result<Option<(PathBuf, PathBuf)>, ()> {
    let dot_git = dir.join(".git");
    match std::fs::metadata(&dot_git) {
        Ok(m) if m.is_dir() => Ok(Some((dot_git, dir.to_path_buf()))),
        Ok(_) => {
            // git takes a `.git` that is no regular file for no repository (`read_gitfile`'s
            // S_ISREG check); read without blocking on a FIFO a run left there.
            let text = match cordon_fs::safe::read_followed(&dot_git, 1 << 20) {
                Ok(Some(t)) => t,
                Ok(None) | Err(cordon_fs::safe::SafeError::NotFile { .. }) => return Ok(None),
                Err(_) => return Err(()),
            };
            let text = String::from_utf8_lossy(&text);
            match text.strip_prefix("gitdir:") {
                Some(rest) => Ok(Some((dir.join(rest.trim()), dir.to_path_buf()))),
                // Not a gitfile: git stops there with an error, running nothing.
                None => Ok(None),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(looks_like_git_dir(dir).then(|| (dir.to_path_buf(), dir.to_path_buf())))
        }
        Err(_) => Err(()),
    }
}

/// Absolute `p` with every link resolved, also a dangling one, at its end (`.envrc ->
/// envrc.shared` before `envrc.shared` exists: a write there makes the link's target) or on the
/// way (`.claude -> cfg` before `cfg` exists: a write of `cfg/settings.json` makes Claude Code's
/// settings): the path a write through `p` would reach, walked name by name as the kernel walks
/// it ([`cordon_fs::links::Links::real`], the one such walk).
pub fn resolve(p: &Path) -> PathBuf {
    cordon_fs::links::Links::default().real(p)
}

const LINKED_WHY: &str = "a link of the surface resolves to it (`.envrc -> envrc.shared`, `.claude -> cfg`): the program that reads the link's name reads this";

/// Where `real` (absolute, links resolved) is what a link of the surface in one of the
/// directories from `real`'s own up to `/` (above the writable root too) resolves to: the operator's
/// `.envrc -> envrc.shared` makes `envrc.shared` what direnv runs, `.claude -> cfg` makes
/// `cfg/settings.json` Claude Code's settings, `.git -> ../gd` makes `gd/config` git's. Each
/// entry of [`TOOL_FILES`], [`TOOL_DIRS`] and `.git/` + [`GIT_CONFIG`] is looked up in each of
/// those directories; one with a link on its way is resolved and compared. Bounded (one
/// listing per directory, a `stat` per name of a surface entry present in it, and a listing
/// of each surface directory present there, for the links inside it: [`links_below`]). Not
/// seen: a link at a surface name in another directory (`sub/.envrc -> ../envrc.shared` for a
/// write of `envrc.shared`) — the after-run scan watches those targets after a command;
/// nothing after a file tool's write does.
pub fn linked_from_surface(real: &Path) -> Option<Hit> {
    let git: Vec<String> = GIT_CONFIG
        .iter()
        .map(|(n, _)| format!(".git/{n}"))
        .collect();
    // (entry, whether every file below it is on the surface too)
    let entries = TOOL_FILES
        .iter()
        .map(|(n, _)| (*n, false))
        .chain(TOOL_DIRS.iter().map(|(n, _)| (*n, true)))
        .chain(git.iter().map(|n| (n.as_str(), true)));
    // Up to `/`, not only to the root: the operator's `proj/.claude -> ws/cl` above the root
    // `proj/ws` makes `ws/cl/settings.json` what Claude Code started in `proj` reads (and
    // direnv runs the nearest `.envrc` up the tree). A listing returns many names per call,
    // so a large directory above (`/tmp`) costs a few calls, not a stat per name.
    let dirs: Vec<&Path> = real.ancestors().skip(1).collect();
    let entries: Vec<(&str, bool)> = entries.collect();
    let firsts: std::collections::HashSet<&str> = entries
        .iter()
        .map(|(e, _)| e.split('/').next().unwrap_or(e))
        .collect();
    for dir in &dirs {
        // One listing of the directory (its entries' types come with it) rather than a stat
        // per entry of the surface: the names of the surface it holds, and which are links.
        let Ok(listing) = std::fs::read_dir(dir) else {
            continue;
        };
        let present: std::collections::HashMap<String, bool> = listing
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                firsts.contains(name.as_str()).then_some(())?;
                Some((name, e.file_type().ok()?.is_symlink()))
            })
            .collect();
        if present.is_empty() {
            continue;
        }
        for (entry, below) in &entries {
            let first = entry.split('/').next().unwrap_or(entry);
            let Some(&first_linked) = present.get(first) else {
                continue;
            };
            // A link at the first name, or further on: walk to find one.
            let linked = first_linked
                || entry
                    .split('/')
                    .skip(1)
                    .scan(dir.join(first), |at, name| {
                        at.push(name);
                        Some(std::fs::symlink_metadata(&*at).ok())
                    })
                    .take_while(Option::is_some)
                    .any(|m| m.is_some_and(|m| m.file_type().is_symlink()));
            if linked {
                let target = resolve(&dir.join(entry));
                if target == real || (*below && real.starts_with(&target)) {
                    return Some(Hit {
                        kind: Kind::Pointed,
                        why: LINKED_WHY,
                    });
                }
            }
            // A link *inside* a directory whose every file is read (`.git/hooks/pre-commit ->
            // ../../scripts/pre-commit`, the usual way a project shares its hooks; `.husky/x
            // -> ../scripts/x`): the directory lies beside `real`, not above it, but where it
            // is is known, so its links are found with a listing or two, not a walk of the
            // root. (Checked with git 2.47: `git commit` runs the linked script.)
            if *below {
                match links_below(&dir.join(entry)) {
                    Some(links) => {
                        if links.iter().any(|l| {
                            let target = resolve(l);
                            target == real || real.starts_with(&target)
                        }) {
                            return Some(Hit {
                                kind: Kind::Pointed,
                                why: LINKED_WHY,
                            });
                        }
                    }
                    None => {
                        return Some(Hit {
                            kind: Kind::Pointed,
                            why: LINKS_UNLISTED_WHY,
                        })
                    }
                }
            }
        }
    }
    None
}

const LINKS_UNLISTED_WHY: &str = "a directory of the surface beside it holds too many entries to list (or cannot be listed), so that a link there resolves to it cannot be ruled out";

/// How many entries [`links_below`] lists in one directory of the surface before giving up.
const LINKS_BELOW_BUDGET: usize = 4096;

/// The links at any depth in `dir` (one of the surface's directories whose every file is read),
/// not following any: every link a program reading that directory would follow. The object
/// store, refs and logs of a git directory below it (`modules/NAME/objects`) are git's working
/// state, not read as configuration, and are skipped. `None` where more than
/// [`LINKS_BELOW_BUDGET`] entries lie there or a directory cannot be listed: the caller cannot
/// rule a link out. A `dir` that is missing, a link itself or no directory holds none.
pub fn links_below(dir: &Path) -> Option<Vec<PathBuf>> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => return Some(Vec::new()),
    }
    let mut links = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(at) = todo.pop() {
        for e in std::fs::read_dir(&at).ok()? {
            let e = e.ok()?;
            seen += 1;
            if seen > LINKS_BELOW_BUDGET {
                return None;
            }
            let ft = e.file_type().ok()?;
            if ft.is_symlink() {
                links.push(e.path());
            } else if ft.is_dir()
                && !matches!(
                    e.file_name().to_str(),
                    Some("objects" | "refs" | "logs" | "lfs")
                )
            {
                todo.push(e.path());
            }
        }
    }
    Some(links)
}

/// `rel` as a file system that ignores case compares it, when that differs: macOS by default,
/// an ext4 or tmpfs directory with casefolding (`chattr +F`), where `.ENVRC` is `.envrc` and
/// `.Git/hooks` is `.git/hooks`. Linux compares names by their NFD form with Unicode's full case
/// folding (`utf8_casefold`, its `nfdicf` table: CaseFolding.txt's C and F), and older kernels
/// also dropped default-ignorable code points (as HFS+ does). Every name of the surface is
/// ASCII, and the only other code points that fold into ASCII are the ones below (computed over
/// all of Unicode, a test holds it against Python's `unicodedata`) and the default-ignorable
/// ones, dropped here whatever the kernel: so a name that folds to a surface name in any of
/// those readings folds to it here. The rest is lower-cased, which leaves non-ASCII names
/// non-ASCII. (Normalisation alone, NFC against NFD, cannot make an ASCII name.)
pub fn folded(rel: &Path) -> Option<PathBuf> {
    let text = rel.to_str()?;
    let mut fold = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            c if default_ignorable(c) => {}
            '\u{df}' | '\u{1e9e}' => fold.push_str("ss"),
            '\u{17f}' => fold.push('s'),
            '\u{37e}' => fold.push(';'),
            '\u{1fef}' => fold.push('`'),
            '\u{fb00}' => fold.push_str("ff"),
            '\u{fb01}' => fold.push_str("fi"),
            '\u{fb02}' => fold.push_str("fl"),
            '\u{fb03}' => fold.push_str("ffi"),
            '\u{fb04}' => fold.push_str("ffl"),
            '\u{fb05}' | '\u{fb06}' => fold.push_str("st"),
            // The Kelvin sign lower-cases to `k`.
            c => fold.extend(c.to_lowercase()),
        }
    }
    (fold != text).then(|| PathBuf::from(fold))
}

/// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, the set the kernel's
/// `utf8data` generator dropped): a case-folding file system drops them from a name, and a
/// terminal shows them as nothing (`cordon_gate`'s escaping of what it prints uses this too).
pub fn default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Whether `dir` is a directory git takes for a repository: `HEAD`, and `objects` and `refs`
/// (each a directory, or a link to one: git follows them, so a link must not hide a repository
/// from cordon) or a `commondir` naming where they are (as a linked worktree's git directory
/// has; git then reads the config there too: `g/HEAD` + `g/commondir` = `../c` runs
/// `c/config`'s pager at a `git log` in `g`, checked with git 2.47).
pub fn looks_like_git_dir(dir: &Path) -> bool {
    let exists = |n: &str| std::fs::symlink_metadata(dir.join(n)).is_ok();
    is_git_dir_by(exists)
}

/// [`looks_like_git_dir`] by a test of which names the directory holds.
pub fn is_git_dir_by(has: impl Fn(&str) -> bool) -> bool {
    has("HEAD") && (has("commondir") || (has("objects") && has("refs")))
}

#[cfg(test)]
mod tests {
    /// `classify` compares the tool entries name by name without collecting them (the hook's
    /// hot path); its answers are those of the collecting comparison it replaced, kept here,
    /// for every entry, each of its prefixes and suffixes, with names before and after, and
    /// in other case.
    #[test]
    fn classify_answers_as_the_collecting_comparison_did() {
        use super::*;
        fn before(parts: &[&str]) -> Option<&'static str> {
            for (tool, why) in TOOL_FILES {
                let t: Vec<&str> = tool.split('/').collect();
                if parts.len() >= t.len() && names_are(&parts[parts.len() - t.len()..], &t) {
                    return Some(why);
                }
            }
            if let Some(why) = tool_suffix(parts[parts.len() - 1].as_bytes()) {
                return Some(why);
            }
            for (tool, why) in TOOL_DIRS {
                let t: Vec<&str> = tool.split('/').collect();
                if (0..parts.len())
                    .any(|i| parts.len() - i >= t.len() && names_are(&parts[i..i + t.len()], &t))
                {
                    return Some(why);
                }
            }
            for (tool, why) in TOOL_FILES.iter().chain(TOOL_DIRS) {
                let t: Vec<&str> = tool.split('/').collect();
                if (1..t.len())
                    .any(|k| parts.len() >= k && names_are(&parts[parts.len() - k..], &t[..k]))
                {
                    return Some(why);
                }
            }
            None
        }
        let mut paths: Vec<String> = vec!["x".into(), "a/b/c".into(), "src/main.rs".into()];
        for (entry, _) in TOOL_FILES.iter().chain(TOOL_DIRS) {
            let names: Vec<&str> = entry.split('/').collect();
            for k in 1..=names.len() {
                let head = names[..k].join("/");
                let tail = names[names.len() - k..].join("/");
                for p in [&head, &tail] {
                    paths.push(p.clone());
                    paths.push(format!("sub/{p}"));
                    paths.push(format!("{p}/x"));
                    paths.push(format!("a/{p}/x/y"));
                    paths.push(p.to_uppercase());
                    paths.push(p.to_lowercase());
                }
            }
        }
        let mut hits = 0;
        for p in &paths {
            let parts: Vec<&str> = p.split('/').collect();
            // (Past the git and cordon names, which the change left alone.)
            if parts.contains(&".git") || CORDON_FILES.iter().any(|(n, _)| Some(n) == parts.last())
            {
                continue;
            }
            let now = classify(Path::new(p), &|_| false).map(|h| h.why);
            assert_eq!(now, before(&parts), "{p}");
            hits += usize::from(now.is_some());
        }
        assert!(hits > 500, "{hits} of {} paths hit", paths.len());
    }

    use super::*;

    fn hit(p: &str) -> Option<Kind> {
        classify(Path::new(p), &|d| d == Path::new("ev")).map(|h| h.kind)
    }

    /// Every code point that folds into ASCII under NFD and full case folding (what a
    /// casefolding file system compares), computed by the real Python's `unicodedata` over all
    /// of Unicode, folds to the same here; so do case and default-ignorable code points.
    #[test]
    fn names_fold_as_a_casefolding_file_system_folds_them() {
        let script = r#"
import unicodedata as u
for cp in range(0x80, 0x110000):
    if 0xD800 <= cp <= 0xDFFF: continue
    c = chr(cp)
    k = u.normalize('NFD', u.normalize('NFD', c).casefold())
    if k and all(ord(x) < 0x80 for x in k):
        print('%x %s' % (cp, k))
"#;
        let o = std::process::Command::new("python3")
            .args(["-c", script])
            .output()
            .expect("python3 runs");
        assert!(o.status.success(), "{o:?}");
        let lines = String::from_utf8(o.stdout).unwrap();
        assert!(lines.lines().count() >= 13, "{lines}");
        for line in lines.lines() {
            let (cp, ascii) = line.split_once(' ').unwrap();
            let c = char::from_u32(u32::from_str_radix(cp, 16).unwrap()).unwrap();
            let got = folded(Path::new(&format!("x{c}")));
            assert_eq!(got, Some(PathBuf::from(format!("x{ascii}"))), "U+{cp}");
        }
        for (name, want) in [
            (".ENVRC", ".envrc"),
            (".Git/HOOKS/x", ".git/hooks/x"),
            (".env\u{200d}rc", ".envrc"),
            (".con\u{fb01}g/mise.toml", ".config/mise.toml"),
            (".claude/\u{17f}ettings.json", ".claude/settings.json"),
            (".codex/hoo\u{212a}s.json", ".codex/hooks.json"),
        ] {
            assert_eq!(folded(Path::new(name)), Some(PathBuf::from(want)), "{name}");
        }
        assert_eq!(folded(Path::new(".envrc")), None);
        // Accents stay: `.envrć` is not `.envrc` on any of these file systems.
        assert_eq!(
            folded(Path::new(".ENVR\u{0107}")),
            Some(".envr\u{0107}".into())
        );
    }

    #[test]
    fn the_homes_startup_files_and_directories_are_on_its_surface() {
        for p in [
            ".vimrc",
            ".config/systemd/user/default.target.wants/x.service",
            ".config/autostart/x.desktop",
            ".local/lib/python3.12/site-packages/x.pth",
            ".local/lib/python3.12/site-packages/usercustomize.py",
            // Round 7: direnv's trust and libraries, Jujutsu, Helix, Zed.
            ".config/direnv/direnv.toml",
            ".config/direnv/lib/x.sh",
            ".local/share/direnv/allow/0123abcd",
            ".config/jj/repos/0123456789abcdef0123/config.toml",
            ".config/jj/conf.d/x.toml",
            ".config/helix/languages.toml",
            ".local/share/helix/trusted_workspaces",
            ".config/zed/settings.json",
            // Round 10: Gemini CLI's extensions, Claude Code's plugins.
            ".claude/plugins/known_marketplaces.json",
            ".claude/plugins/cache/m/x/1.0.0/hooks/hooks.json",
            ".gemini/extensions/x/gemini-extension.json",
            ".gemini/extensions/x/hooks/hooks.json",
        ] {
            assert!(classify_home(Path::new(p)).is_some(), "{p}");
        }
        for p in [
            ".local/lib/python3.12/site-packages/x.py",
            ".config/systemd-other",
            "notes.txt",
        ] {
            assert!(classify_home(Path::new(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn each_host_setting_is_on_the_surface() {
        for entry in HOST_SETTINGS {
            assert!(
                why_of(entry).is_some(),
                "{entry} is not an entry of the surface"
            );
        }
    }

    #[test]
    fn host_settings_are_found_by_their_end_and_where_the_environment_moves_them() {
        let none = |_: &str| None;
        let env = |n: &str| match n {
            "CODEX_HOME" => Some("/c".into()),
            "XDG_CONFIG_HOME" => Some("/x/cfg".into()),
            _ => None,
        };
        for p in [
            "/p/.claude/settings.json",
            "/h/.copilot/settings.json",
            "/p/.github/hooks/any.json",
            "/h/.config/opencode/plugin/cordon.js",
            "/p/.opencode/plugins/x/y.ts",
            "/p/opencode.json",
        ] {
            assert!(host_settings(Path::new(p), &none).is_some(), "{p}");
        }
        for p in [
            "/c/hooks.json",
            "/c/config.toml",
            "/x/cfg/opencode/plugin/a.js",
        ] {
            assert!(host_settings(Path::new(p), &env).is_some(), "{p}");
            assert!(host_settings(Path::new(p), &none).is_none(), "{p}");
        }
        for p in [
            "/p/.envrc",
            "/p/src/settings.json",
            "/p/.claude/notes.md",
            "/c/notes",
        ] {
            assert!(host_settings(Path::new(p), &env).is_none(), "{p}");
        }
    }

    #[test]
    fn what_was_decided_off_the_surface_is_not_on_it() {
        for (p, _) in NOT_ON_SURFACE {
            assert_eq!(hit(p), None, "{p}");
            assert_eq!(hit(&format!("sub/{p}")), None, "{p}");
        }
    }

    #[test]
    fn the_surface_is_found_anywhere_in_a_root() {
        for p in [
            ".git/config",
            ".git/hooks/pre-commit",
            "sub/.git/config",
            ".git/commondir",
            ".git/worktrees/w/config.worktree",
            ".git/modules/m/hooks/post-checkout",
            ".git/objects/info/alternates",
            ".git",
            "ev/config",
            "ev/hooks/x",
        ] {
            assert_eq!(hit(p), Some(Kind::Git), "{p}");
        }
        for p in [
            ".envrc",
            "a/b/.envrc",
            ".claude/settings.json",
            ".gemini/settings.json",
            ".codex/hooks.json",
            ".mcp.json",
            ".cargo/config.toml",
            ".vscode/tasks.json",
            "opencode.json",
            "sub/.github/copilot/settings.json",
            ".github/hooks/any-name.json",
            ".github/hooks",
            ".opencode/plugin/x.js",
            "a/.opencode/plugins/deep/y.ts",
            ".config/opencode/plugin/z.js",
            // Round 10: opencode's and Gemini CLI's custom commands run their `!` lines.
            ".gemini/commands/plant.toml",
            "sub/.gemini/commands/git/x.toml",
            ".opencode/command/init.md",
            "a/.opencode/commands/deep/x.md",
            ".config/opencode/command/y.md",
            ".config/opencode/commands/z.md",
            // Round 4: the settings directories themselves (`mv x .claude`).
            ".claude",
            "sub/.vscode",
            ".github/copilot",
            ".opencode",
            ".hg",
            "rust-toolchain.toml",
            ".pre-commit-config.yaml",
            // Round 5: mise's other files, `.tool-versions`, other editors' MCP and hooks.
            ".tool-versions",
            "sub/.tool-versions",
            "mise/config.toml",
            "mise",
            ".config/mise.toml",
            ".config/mise/mise.local.toml",
            ".config/mise/conf.d/x.toml",
            "a/.mise/conf.d/y.toml",
            ".vscode/mcp.json",
            ".cursor/mcp.json",
            ".cursor/hooks.json",
            ".husky",
            ".husky/pre-commit",
            "sub/.husky/_/post-checkout",
            // Round 6: JetBrains' project directory.
            ".idea",
            ".idea/workspace.xml",
            "sub/.idea/runConfigurations/x.xml",
            // Round 7: Jujutsu, dev containers, Zed, Helix.
            ".jj/repo/config.toml",
            "sub/.jj/repo/config-id",
            ".jj/workspace-config.toml",
            ".jj/workspace-config-id",
            ".jj/repo/store/git_target",
            ".jj/repo",
            ".jj",
            ".devcontainer.json",
            ".devcontainer/devcontainer.json",
            "sub/.devcontainer/py/devcontainer.json",
            ".devcontainer/Dockerfile",
            ".zed/settings.json",
            ".zed/tasks.json",
            ".helix/languages.toml",
            "a/.helix/config.toml",
        ] {
            assert_eq!(hit(p), Some(Kind::Tool), "{p}");
        }
        assert_eq!(hit("cordon.toml"), Some(Kind::Cordon));
        assert_eq!(hit("x/cordon.rules.toml"), Some(Kind::Cordon));
        for p in [
            ".git/objects/ab/cdef",
            ".git/HEAD",
            "src/main.rs",
            "envrc",
            "README.md",
            "ev/objects/x",
            "config",
            ".github/workflows/ci.yml",
            "claude",
            ".vscode/extensions.json",
            "tool-versions",
            "config.toml",
            ".cursor/rules/x.md",
            ".jj/repo/op_heads/heads/x",
            ".jj/working_copy/checkout",
            "devcontainer.json",
            "zed/settings.json",
        ] {
            assert_eq!(hit(p), None, "{p}");
        }
    }
}
