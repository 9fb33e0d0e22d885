/**
 * Files and directories that hold secrets: environment files, SSH and GnuPG
 * keys, cloud and registry credentials, key stores, system password files and
 * infrastructure state.
 *
 * Patterns see the path lower-cased, `\` turned into `/` and `$HOME` into `~`;
 * a glob (`**\/.env*`, `*.pem`) matches when it names such files.
 *
 * @module
 */

import type { SensitivePathRule } from "../_types.ts";

/** Template and documentation copies that are meant to be committed. */
const TEMPLATE =
  /(?:^|[./_-])(?:example|examples|sample|samples|template|templates|tmpl|tpl|dist|defaults?|schema)(?:\.[^/]*)?$/;
/** Source code and docs that merely live in a folder named like a secret. */
const SOURCE_OR_DOCS =
  /\.(?:ts|tsx|js|jsx|mjs|cjs|py|go|rs|java|kt|rb|php|cs|swift|c|h|cpp|md|mdx|rst|html|css|snap)$/;

/** Every sensitive-path rule. */
export const sensitivePathRules: SensitivePathRule[] = [
  {
    id: "env-file",
    kind: "sensitive_path",
    label: "environment file",
    keywords: [".env"],
    pattern: /(?:^|\/)\.env(?:[.*][^/]*)?$/,
    allow: [TEMPLATE, /(?:^|\/)\.env\.[^/]*\.(?:md|txt|rst)$/],
  },
  {
    id: "named-env-file",
    kind: "sensitive_path",
    label: "environment file",
    keywords: [".env"],
    pattern: /(?:^|\/)[^/]+\.env$/,
    allow: [TEMPLATE, /(?:^|\/)(?:process|import\.meta|deno)\.env$/],
  },
  {
    id: "direnv-file",
    kind: "sensitive_path",
    label: "direnv file",
    keywords: [".envrc"],
    pattern: /(?:^|\/)\.envrc$/,
  },
  {
    id: "ssh-directory",
    kind: "sensitive_path",
    label: "SSH directory",
    keywords: [".ssh"],
    pattern: /(?:^|\/)\.ssh(?:\/|$)/,
    // Public keys and host fingerprints are not secret.
    allow: [/\.pub$/, /(?:^|\/)known_hosts(?:\.old)?$/],
  },
  {
    id: "ssh-private-key",
    kind: "sensitive_path",
    label: "SSH private key",
    keywords: ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "ssh_host_"],
    pattern:
      /(?:^|\/)(?:id_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:[._-][^/]*)?|ssh_host_[a-z0-9]+_key)$/,
    allow: [/\.pub$/],
  },
  {
    id: "ssh-authorized-keys",
    kind: "sensitive_path",
    label: "SSH authorized keys",
    keywords: ["authorized_keys"],
    pattern: /(?:^|\/)authorized_keys2?$/,
  },
  {
    id: "gnupg-directory",
    kind: "sensitive_path",
    label: "GnuPG directory",
    keywords: [".gnupg", ".password-store"],
    pattern: /(?:^|\/)\.(?:gnupg|password-store)(?:\/|$)/,
  },
  {
    id: "aws-credentials",
    kind: "sensitive_path",
    label: "AWS credentials",
    keywords: [".aws"],
    pattern: /(?:^|\/)\.aws(?:\/|$)/,
  },
  {
    id: "gcloud-credentials",
    kind: "sensitive_path",
    label: "Google Cloud credentials",
    keywords: ["gcloud"],
    pattern: /(?:^|\/)\.config\/gcloud(?:\/|$)/,
  },
  {
    id: "azure-credentials",
    kind: "sensitive_path",
    label: "Azure credentials",
    keywords: [".azure"],
    pattern: /(?:^|\/)\.azure(?:\/|$)/,
  },
  {
    id: "kubeconfig",
    kind: "sensitive_path",
    label: "Kubernetes config",
    keywords: [".kube", "kubeconfig"],
    pattern: /(?:^|\/)(?:\.kube\/config|kubeconfig(?:\.ya?ml)?)$/,
  },
  {
    id: "docker-config",
    kind: "sensitive_path",
    label: "Docker credentials",
    keywords: [".docker", ".dockercfg"],
    pattern: /(?:^|\/)(?:\.docker\/config\.json|\.dockercfg)$/,
  },
  {
    id: "package-registry-credentials",
    kind: "sensitive_path",
    label: "package registry credentials",
    keywords: [
      ".npmrc",
      ".pypirc",
      ".yarnrc",
      ".gem",
      ".cargo",
      ".composer",
      ".m2",
      ".gradle",
      ".nuget",
    ],
    pattern:
      /(?:^|\/)(?:\.npmrc|\.pypirc|\.yarnrc\.yml|\.gem\/credentials|\.cargo\/credentials(?:\.toml)?|\.composer\/auth\.json|\.m2\/settings(?:-security)?\.xml|\.gradle\/gradle\.properties|\.nuget\/nuget\/nuget\.config)$/,
  },
  {
    id: "login-credentials",
    kind: "sensitive_path",
    label: "login credentials",
    keywords: [
      "netrc",
      ".pgpass",
      ".git-credentials",
      ".my.cnf",
      ".vault-token",
      ".htpasswd",
      "hosts.y",
      ".boto",
      ".s3cfg",
      "credentials.tfrc",
    ],
    pattern:
      /(?:^|\/)(?:[._]netrc|\.pgpass|\.git-credentials|\.my\.cnf|\.vault-token|\.htpasswd|\.boto|\.s3cfg|\.config\/gh\/hosts\.ya?ml|\.terraform\.d\/credentials\.tfrc\.json)$/,
  },
  {
    id: "key-file",
    kind: "sensitive_path",
    label: "key file",
    keywords: [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".p8", ".kdbx"],
    pattern: /\.(?:pem|key|p12|pfx|jks|keystore|ppk|p8|kdbx)$/,
    // Certificates and public keys are meant to be shared.
    allow: [
      /(?:^|\/)(?:ca|cacert|ca-bundle|ca-certificates|cert|chain|fullchain|public)[^/]*\.pem$/,
      /\.pub\.pem$|pub(?:lic)?[._-]?key\.(?:pem|key)$/,
    ],
  },
  {
    id: "system-password-file",
    kind: "sensitive_path",
    label: "system password file",
    keywords: ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/master.passwd", "/environ"],
    pattern:
      /^(?:\/etc\/(?:g?shadow|sudoers|master\.passwd)(?:-|\.bak)?|\/etc\/sudoers\.d(?:\/.*)?|\/proc\/(?:self|\d+)\/environ)$/,
  },
  {
    id: "terraform-state",
    kind: "sensitive_path",
    label: "Terraform state",
    keywords: [".tfstate"],
    pattern: /\.tfstate(?:\.backup)?$/,
  },
  {
    id: "credentials-file",
    kind: "sensitive_path",
    label: "credentials file",
    keywords: [
      "credentials",
      "client_secret",
      "service-account",
      "service_account",
      "serviceaccount",
    ],
    pattern:
      /(?:^|\/)(?:(?:[^/]*[._-])?credentials(?:[._-][^/]*)?\.(?:json|ya?ml|toml|xml|ini|csv|txt|conf|cfg|properties|enc)|credentials|client_secrets?[^/]*\.json|[^/]*service[-_]?account[^/]*\.json)$/,
    allow: [TEMPLATE],
  },
  {
    id: "secrets-file",
    kind: "sensitive_path",
    label: "secrets file",
    keywords: ["secret"],
    pattern:
      /(?:^|\/)(?:\.?secrets?(?:[._-][^/]*)?\.(?:ya?ml|json|toml|env|ini|txt|properties|conf)|\.secrets?|\.?secrets\/.*)$/,
    allow: [TEMPLATE, SOURCE_OR_DOCS],
  },
  {
    id: "shell-history",
    kind: "sensitive_path",
    label: "shell history",
    keywords: ["_history"],
    pattern: /(?:^|\/)\.(?:bash|zsh|sh|python|psql|mysql|node_repl|rediscli|sqlite)_history$/,
  },
];
