/**
 * What an approval is about. A provider may send its tool's input as JSON (a command, a file
 * edit): shown as fields, a command in a code block with its working directory, an edit as a
 * diff, never as the raw JSON text. Anything else is shown as the text it is.
 */

type Fields = Readonly<Record<string, unknown>>

const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const parseFields = (detail: string): Fields | undefined => {
  try {
    const value: unknown = JSON.parse(detail)
    return isFields(value) ? value : undefined
  } catch {
    return undefined
  }
}

const text = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

/** The removed lines, then the added ones, each marked as a unified diff marks them. */
const DiffBlock = (props: { readonly before: string; readonly after: string }) => (
  <pre className="approval-diff">
    {props.before.split("\n").map((l, i) => (
      <span key={`-${i}`} className="diff-del">{`- ${l}\n`}</span>
    ))}
    {props.after.split("\n").map((l, i) => (
      <span key={`+${i}`} className="diff-add">{`+ ${l}\n`}</span>
    ))}
  </pre>
)

// Fields shown in their own way above the rest.
const SHOWN = new Set(["command", "cwd", "workdir", "old_string", "new_string", "content", "file_path", "path"])

export const ApprovalDetail = ({ detail }: { readonly detail: string }) => {
  const fields = parseFields(detail)
  if (fields === undefined) return <pre className="approval-text">{detail}</pre>
  const command = text(fields.command)
  const cwd = text(fields.cwd) ?? text(fields.workdir)
  const file = text(fields.file_path) ?? text(fields.path)
  const before = text(fields.old_string)
  const after = text(fields.new_string) ?? text(fields.content)
  const rest = Object.entries(fields).filter(([k]) => !SHOWN.has(k))
  return (
    <div className="approval-detail">
      {command !== undefined && (
        <pre className="approval-command">
          <code>{command}</code>
        </pre>
      )}
      {cwd !== undefined && <div className="muted approval-cwd">in {cwd}</div>}
      {file !== undefined && <div className="approval-file">{file}</div>}
      {after !== undefined && <DiffBlock before={before ?? ""} after={after} />}
      {rest.length > 0 && (
        <dl className="approval-fields">
          {rest.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{typeof v === "string" ? v : JSON.stringify(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  )
}
