import type { PlanbridgeClient } from "@planbridge/client"
import { URL_OPEN_OPTION_ID, URL_QUESTION_ID, type PromptView, type PromptUrl } from "@planbridge/contracts"
import { PromptHeading, usePromptAnswer, type PromptOutcome } from "./promptAnswer.tsx"

/**
 * A URL-mode prompt (a login, a secret typed on the provider's own page): the address as a link,
 * Open and Decline. Opening is the person's consent: the link opens in a new tab and the provider
 * is told `accept`; what they type there never passes through Planbridge. Once opened, the card
 * waits for the provider to say the flow completed (the prompt resolves then).
 */
export const UrlPromptCard = (props: {
  readonly client: PlanbridgeClient
  readonly view: PromptView
  readonly url: PromptUrl
  readonly outcome: PromptOutcome
  readonly setOutcome: (o: PromptOutcome) => void
}) => {
  const { client, view, url, outcome, setOutcome } = props
  const prompt = view.prompt
  const { sending, send } = usePromptAnswer(view.promptId, setOutcome)
  const open = () =>
    void send(() =>
      client.respond(view.promptId, [{ questionId: URL_QUESTION_ID, selectedOptionIds: [URL_OPEN_OPTION_ID] }])
    )
  const opened = outcome === "won"
  return (
    <section
      className="card question-card url-prompt"
      data-prompt={view.promptId}
      aria-label={prompt.title ?? "Open a page"}
    >
      <PromptHeading view={view} fallback="The agent asks you to open a page" />
      <p>{prompt.questions[0].label}</p>
      <p>
        <a
          className="prompt-url"
          href={url.url}
          target="_blank"
          rel="noopener noreferrer"
          onClick={opened ? undefined : open}
        >
          {url.url}
        </a>
      </p>
      {opened ? (
        <p className="muted" role="status">
          Opened. Waiting for the provider to confirm that it is done.
        </p>
      ) : (
        <div className="actions">
          <a
            className="button primary"
            role="button"
            href={url.url}
            target="_blank"
            rel="noopener noreferrer"
            aria-disabled={sending}
            onClick={(e) => {
              if (sending) e.preventDefault()
              else open()
            }}
          >
            Open
          </a>
          <button
            type="button"
            disabled={sending}
            onClick={() => void send(() => client.dismiss(view.promptId, "empty"))}
          >
            Decline
          </button>
        </div>
      )}
    </section>
  )
}
