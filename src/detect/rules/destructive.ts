/**
 * Destructive commands and SQL statements: recursive deletes, lost git
 * history, dropped data, destroyed infrastructure and wiped disks.
 *
 * Shell patterns see one command at a time, wrappers removed and words joined
 * by single spaces (`sudo rm  -r -f "x"` is seen as `rm -r -f x`); their
 * keywords are program names (`mkfs` also covers `mkfs.ext4`; `*` is any
 * program). SQL patterns see one statement at a time, comments removed.
 * Within a command the first matching rule names it.
 *
 * @module
 */

import type { DestructiveRule } from "../_types.ts";

/** A word that is a short-option cluster containing `letter`, e.g. `-rf` for `r`. */
const flag = (letters: string, long: string) =>
  String.raw`(?=.* (?:-[a-zA-Z]*[${letters}][a-zA-Z]*|--${long})(?: |$))`;
const RECURSIVE = flag("rR", "recursive");
const FORCE = flag("f", "force");
/** Any global options between a program and its subcommand. */
const ANY_WORDS = String.raw`(?:[^ ]+ )*?`;
const DRY_RUN = / --dry-run(?:=(?:client|server|true))?(?: |$)/;

/** Every destructive-operation rule, in the order they are tried. */
export const destructiveRules: DestructiveRule[] = [
  // --- Files ----------------------------------------------------------------
  {
    id: "rm-recursive-force",
    kind: "destructive_operation",
    scope: "shell",
    label: "rm -rf",
    keywords: ["rm"],
    pattern: new RegExp(`^rm(?= )${RECURSIVE}${FORCE}`),
  },
  {
    id: "rm-recursive",
    kind: "destructive_operation",
    scope: "shell",
    label: "rm -r",
    keywords: ["rm"],
    pattern: new RegExp(`^rm(?= )${RECURSIVE}`),
  },
  {
    id: "rimraf",
    kind: "destructive_operation",
    scope: "shell",
    label: "rimraf",
    keywords: ["rimraf"],
    pattern: /^rimraf(?: |$)/,
  },
  {
    id: "xargs-rm",
    kind: "destructive_operation",
    scope: "shell",
    label: "xargs rm",
    keywords: ["xargs"],
    pattern: /^xargs (?:rm|shred|unlink)(?: |$)/,
  },
  {
    id: "find-delete",
    kind: "destructive_operation",
    scope: "shell",
    label: "find -delete",
    keywords: ["find"],
    pattern: /^find (?:.* )?-delete(?: |$)/,
  },
  {
    id: "find-exec-rm",
    kind: "destructive_operation",
    scope: "shell",
    label: "find -exec rm",
    keywords: ["find"],
    pattern: /^find .* -(?:exec|execdir|ok|okdir) (?:[^ ]*\/)?(?:rm|shred|unlink)(?: |$)/,
  },
  {
    id: "mv-to-dev-null",
    kind: "destructive_operation",
    scope: "shell",
    label: "mv to /dev/null",
    keywords: ["mv"],
    pattern: /^mv .* \/dev\/null$/,
  },
  // --- Git history ------------------------------------------------------------
  {
    id: "git-push-force",
    kind: "destructive_operation",
    scope: "shell",
    label: "git push --force",
    keywords: ["git"],
    // --force-with-lease and --force-if-includes are the safe forms: not matched.
    pattern: /^git push(?= )(?=.* (?:--force|-[a-zA-Z]*f[a-zA-Z]*|\+[^ ]+)(?: |$))/,
  },
  {
    id: "git-push-delete",
    kind: "destructive_operation",
    scope: "shell",
    label: "git push --delete",
    keywords: ["git"],
    pattern: /^git push(?= )(?=.* (?:--delete|-[a-zA-Z]*d[a-zA-Z]*|:[^ ]+)(?: |$))/,
  },
  {
    id: "git-reset-hard",
    kind: "destructive_operation",
    scope: "shell",
    label: "git reset --hard",
    keywords: ["git"],
    pattern: /^git reset(?= )(?=.* --hard(?: |$))/,
  },
  {
    id: "git-clean-force",
    kind: "destructive_operation",
    scope: "shell",
    label: "git clean -f",
    keywords: ["git"],
    pattern: new RegExp(`^git clean(?= )${FORCE}`),
    // A dry run (-n, --dry-run) only lists what would go.
    allow: [/ (?:-[a-zA-Z]*n[a-zA-Z]*|--dry-run)(?: |$)/],
  },
  {
    id: "git-branch-force-delete",
    kind: "destructive_operation",
    scope: "shell",
    label: "git branch -D",
    keywords: ["git"],
    pattern: new RegExp(
      String.raw`^git branch(?= )(?:(?=.* -[a-zA-Z]*D[a-zA-Z]*(?: |$))|${
        flag("d", "delete")
      }${FORCE})`,
    ),
  },
  {
    id: "git-checkout-discard",
    kind: "destructive_operation",
    scope: "shell",
    label: "git checkout --",
    keywords: ["git"],
    pattern: /^git checkout (?:.* )?(?:--(?: |$)|\.$|--force(?: |$)|-f(?: |$))/,
  },
  {
    id: "git-restore-worktree",
    kind: "destructive_operation",
    scope: "shell",
    label: "git restore",
    keywords: ["git"],
    // `git restore --staged` only unstages; with --worktree it discards too.
    pattern: /^git restore(?= )(?:(?!.* (?:--staged|-S)(?: |$))|(?=.* (?:--worktree|-W)(?: |$)))/,
  },
  {
    id: "git-stash-drop",
    kind: "destructive_operation",
    scope: "shell",
    label: "git stash drop",
    keywords: ["git"],
    pattern: /^git stash drop(?: |$)/,
  },
  {
    id: "git-stash-clear",
    kind: "destructive_operation",
    scope: "shell",
    label: "git stash clear",
    keywords: ["git"],
    pattern: /^git stash clear(?: |$)/,
  },
  {
    id: "git-filter-branch",
    kind: "destructive_operation",
    scope: "shell",
    label: "git filter-branch",
    keywords: ["git"],
    pattern: /^git filter-(?:branch|repo)(?: |$)/,
  },
  // --- Databases from the command line ---------------------------------------
  {
    id: "dropdb",
    kind: "destructive_operation",
    scope: "shell",
    label: "dropdb",
    keywords: ["dropdb"],
    pattern: /^dropdb(?: |$)/,
  },
  {
    id: "rails-db-drop",
    kind: "destructive_operation",
    scope: "shell",
    label: "rails db:drop",
    keywords: ["rails", "rake"],
    pattern: /^(?:rails|rake) (?:.* )?db:(?:drop|reset|purge)(?::all)?(?: |$)/,
  },
  {
    id: "prisma-migrate-reset",
    kind: "destructive_operation",
    scope: "shell",
    label: "prisma migrate reset",
    keywords: ["prisma"],
    pattern: /^prisma migrate reset(?: |$)/,
  },
  // --- Infrastructure ---------------------------------------------------------
  {
    id: "terraform-destroy",
    kind: "destructive_operation",
    scope: "shell",
    label: "terraform destroy",
    keywords: ["terraform", "tofu", "terragrunt"],
    pattern: /^(?:terraform|tofu|terragrunt) (?:-[^ ]+ )*(?:run-all )?destroy(?: |$)/,
  },
  {
    id: "terraform-apply-destroy",
    kind: "destructive_operation",
    scope: "shell",
    label: "terraform apply -destroy",
    keywords: ["terraform", "tofu", "terragrunt"],
    pattern:
      /^(?:terraform|tofu|terragrunt) (?:-[^ ]+ )*(?:run-all )?apply(?= )(?=.* --?destroy(?: |$))/,
  },
  {
    id: "kubectl-delete",
    kind: "destructive_operation",
    scope: "shell",
    label: "kubectl delete",
    keywords: ["kubectl", "oc"],
    pattern: new RegExp(`^(?:kubectl|oc) ${ANY_WORDS}delete(?: |$)`),
    allow: [DRY_RUN],
  },
  {
    id: "helm-uninstall",
    kind: "destructive_operation",
    scope: "shell",
    label: "helm uninstall",
    keywords: ["helm"],
    pattern: /^helm (?:--?[^ ]+ )*(?:uninstall|delete|del|un)(?: |$)/,
    allow: [DRY_RUN],
  },
  {
    id: "docker-system-prune",
    kind: "destructive_operation",
    scope: "shell",
    label: "docker system prune",
    keywords: ["docker", "podman"],
    pattern: /^(?:docker|podman) (?:-[^ ]+ )*system prune(?: |$)/,
  },
  {
    id: "docker-volume-rm",
    kind: "destructive_operation",
    scope: "shell",
    label: "docker volume rm",
    keywords: ["docker", "podman"],
    pattern: /^(?:docker|podman) (?:-[^ ]+ )*volume (?:rm|remove)(?: |$)/,
  },
  {
    id: "docker-volume-prune",
    kind: "destructive_operation",
    scope: "shell",
    label: "docker volume prune",
    keywords: ["docker", "podman"],
    pattern: /^(?:docker|podman) (?:-[^ ]+ )*volume prune(?: |$)/,
  },
  {
    id: "docker-compose-down-volumes",
    kind: "destructive_operation",
    scope: "shell",
    label: "docker compose down -v",
    keywords: ["docker", "docker-compose", "podman", "podman-compose"],
    pattern:
      /^(?:docker compose|docker-compose|podman compose|podman-compose) (?:.* )?down(?= |$)(?=.* (?:-v|--volumes)(?: |$))/,
  },
  {
    id: "aws-s3-rm-recursive",
    kind: "destructive_operation",
    scope: "shell",
    label: "aws s3 rm --recursive",
    keywords: ["aws"],
    pattern: new RegExp(`^aws ${ANY_WORDS}s3 rm(?= )(?=.* --recursive(?: |$))`),
    allow: [/ --dryrun(?: |$)/],
  },
  {
    id: "aws-s3-rb-force",
    kind: "destructive_operation",
    scope: "shell",
    label: "aws s3 rb --force",
    keywords: ["aws"],
    pattern: new RegExp(`^aws ${ANY_WORDS}s3 rb(?= )(?=.* --force(?: |$))`),
  },
  {
    id: "aws-ec2-terminate",
    kind: "destructive_operation",
    scope: "shell",
    label: "aws ec2 terminate-instances",
    keywords: ["aws"],
    pattern: new RegExp(`^aws ${ANY_WORDS}ec2 terminate-instances(?: |$)`),
    allow: [/ --dry-run(?: |$)/],
  },
  {
    id: "aws-delete-resource",
    kind: "destructive_operation",
    scope: "shell",
    label: "aws delete",
    keywords: ["aws"],
    pattern: new RegExp(
      `^aws ${ANY_WORDS}(?:rds delete-db-(?:instance|cluster)|dynamodb delete-table|cloudformation delete-stack|s3api delete-bucket|eks delete-cluster|ecr delete-repository|efs delete-file-system)(?: |$)`,
    ),
  },
  {
    id: "gcloud-delete",
    kind: "destructive_operation",
    scope: "shell",
    label: "gcloud delete",
    keywords: ["gcloud"],
    pattern: new RegExp(`^gcloud ${ANY_WORDS}delete(?: |$)`),
  },
  {
    id: "gcloud-storage-rm-recursive",
    kind: "destructive_operation",
    scope: "shell",
    label: "gcloud storage rm --recursive",
    keywords: ["gcloud"],
    pattern: /^gcloud (?:[^ ]+ )*?storage rm(?= )(?=.* (?:--recursive|-r)(?: |$))/,
  },
  {
    id: "gsutil-rm-recursive",
    kind: "destructive_operation",
    scope: "shell",
    label: "gsutil rm -r",
    keywords: ["gsutil"],
    pattern: new RegExp(`^gsutil (?:-[^ ]+ )*rm(?= )${RECURSIVE}`),
  },
  {
    id: "az-delete",
    kind: "destructive_operation",
    scope: "shell",
    label: "az delete",
    keywords: ["az"],
    pattern: new RegExp(`^az ${ANY_WORDS}delete(?: |$)`),
  },
  // --- Disks ------------------------------------------------------------------
  {
    id: "mkfs",
    kind: "destructive_operation",
    scope: "shell",
    label: "mkfs",
    keywords: ["mkfs", "mke2fs", "mkswap"],
    pattern: /^(?:mkfs(?:\.[a-z0-9]+)?|mke2fs|mkswap)(?: |$)/,
  },
  {
    id: "dd-to-device",
    kind: "destructive_operation",
    scope: "shell",
    label: "dd of=/dev",
    keywords: ["dd"],
    pattern:
      /^dd (?:.* )?of=\/dev\/(?!null(?: |$)|zero(?: |$)|stdout(?: |$)|stderr(?: |$)|tty|fd\/)/,
  },
  {
    id: "wipefs",
    kind: "destructive_operation",
    scope: "shell",
    label: "wipefs",
    keywords: ["wipefs"],
    pattern: /^wipefs(?= )(?=.* (?:-[a-zA-Z]*a[a-zA-Z]*|--all|-o|--offset)(?: |$))/,
  },
  {
    id: "shred",
    kind: "destructive_operation",
    scope: "shell",
    label: "shred",
    keywords: ["shred"],
    pattern: /^shred(?: |$)/,
  },
  {
    id: "sgdisk-zap",
    kind: "destructive_operation",
    scope: "shell",
    label: "sgdisk --zap-all",
    keywords: ["sgdisk"],
    pattern: /^sgdisk (?:.* )?(?:--zap-all|-Z)(?: |$)/,
  },
  {
    id: "redirect-to-block-device",
    kind: "destructive_operation",
    scope: "shell",
    label: "write to block device",
    keywords: ["*"],
    pattern: / \d?>>? \/dev\/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|disk\d|mmcblk\d)/,
  },
  // --- SQL and other data stores ------------------------------------------------
  {
    id: "sql-drop-table",
    kind: "destructive_operation",
    scope: "sql",
    label: "DROP TABLE",
    keywords: ["drop"],
    pattern: /\bDROP\s+TABLE\b/i,
  },
  {
    id: "sql-drop-database",
    kind: "destructive_operation",
    scope: "sql",
    label: "DROP DATABASE",
    keywords: ["drop"],
    pattern: /\bDROP\s+DATABASE\b/i,
  },
  {
    id: "sql-drop-schema",
    kind: "destructive_operation",
    scope: "sql",
    label: "DROP SCHEMA",
    keywords: ["drop"],
    pattern: /\bDROP\s+SCHEMA\b/i,
  },
  {
    id: "sql-truncate",
    kind: "destructive_operation",
    scope: "sql",
    label: "TRUNCATE",
    keywords: ["truncate"],
    pattern: /(?:^|;)\s*TRUNCATE\s+(?:TABLE\s+)?(?:ONLY\s+)?[\w."`[]/i,
  },
  {
    id: "sql-delete-without-where",
    kind: "destructive_operation",
    scope: "sql",
    label: "DELETE without WHERE",
    keywords: ["delete"],
    pattern: /\bDELETE\s+FROM\s+[\w."`[\]]+/i,
    allow: [/\bWHERE\b/i],
  },
  {
    id: "mongodb-drop",
    kind: "destructive_operation",
    scope: "sql",
    label: "MongoDB drop",
    keywords: [".drop(", "dropdatabase"],
    pattern: /\bdb\.(?:[\w$]+\.drop|getCollection\([^)]*\)\.drop|dropDatabase)\(\s*\)/,
  },
  {
    id: "redis-flush",
    kind: "destructive_operation",
    scope: "sql",
    label: "FLUSHALL",
    keywords: ["flushall", "flushdb"],
    pattern: /^\s*FLUSH(?:ALL|DB)\b/i,
  },
];
