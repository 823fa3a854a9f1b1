import type { PromptQuestion } from "@planbridge/contracts"
import type { KeyboardEvent, Ref } from "react"
import type { Draft } from "../state/questionDrafts.ts"

export type { Draft } from "../state/questionDrafts.ts"

/**
 * One question: radio buttons (or checkboxes when multi-select), a free-text field where allowed
 * (a password field when the answer is secret: never shown, never kept after sending), keys 1–9
 * to pick an option while the question has the focus (a single choice then moves on to the
 * next question: `onPicked`), and "n/m" when the card asks several.
 */
export const QuestionField = (props: {
  readonly question: PromptQuestion
  readonly draft: Draft
  readonly onChange: (draft: Draft) => void
  readonly position: { readonly index: number; readonly count: number }
  readonly onPicked: () => void
  readonly fieldRef: Ref<HTMLFieldSetElement>
}) => {
  const q = props.question
  const toggle = (id: string) => {
    const has = props.draft.selected.includes(id)
    const selected = q.multiSelect
      ? has
        ? props.draft.selected.filter((s) => s !== id)
        : [...props.draft.selected, id]
      : [id]
    props.onChange({ ...props.draft, selected })
  }
  const onKeyDown = (e: KeyboardEvent<HTMLFieldSetElement>) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "radio" && e.target.type !== "checkbox") return
    if (e.target instanceof HTMLTextAreaElement || !/^[1-9]$/.test(e.key)) return
    const option = q.options[Number(e.key) - 1]
    if (option === undefined) return
    e.preventDefault()
    toggle(option.id)
    if (!q.multiSelect) props.onPicked()
  }
  const { index, count } = props.position
  return (
    <fieldset ref={props.fieldRef} className="question" tabIndex={0} onKeyDown={onKeyDown} data-question={q.id}>
      <legend>
        {count > 1 && <span className="counter muted">{`${index + 1}/${count}`}</span>}{" "}
        {q.header !== undefined && <span className="badge">{q.header}</span>} {q.label}
        {q.required && <span className="required"> *</span>}
      </legend>
      {q.description !== undefined && <p className="muted">{q.description}</p>}
      {q.options.map((o, i) => (
        <label key={o.id} className="option">
          <input
            type={q.multiSelect ? "checkbox" : "radio"}
            name={q.id}
            checked={props.draft.selected.includes(o.id)}
            onChange={() => toggle(o.id)}
          />
          {i < 9 && <kbd>{i + 1}</kbd>} {o.label}
          {o.recommended === true && <span className="badge badge-ok">recommended</span>}
          {o.description !== undefined && <span className="muted"> — {o.description}</span>}
        </label>
      ))}
      {q.allowFreeform && (
        <input
          className="freeform"
          type={q.secret ? "password" : "text"}
          autoComplete="off"
          // Password managers are told to keep out: a secret answer is for the agent only.
          data-1p-ignore={q.secret ? "true" : undefined}
          data-lpignore={q.secret ? "true" : undefined}
          aria-label={q.secret ? `${q.label} (secret)` : q.options.length > 0 ? `${q.label} (other)` : q.label}
          placeholder={q.freeformPlaceholder ?? (q.options.length > 0 ? "Other…" : "Your answer")}
          value={props.draft.text}
          onChange={(e) => props.onChange({ ...props.draft, text: e.target.value })}
        />
      )}
    </fieldset>
  )
}
