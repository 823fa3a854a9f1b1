import type { PlanbridgeClient } from "@planbridge/client"
import type { ItemView, PromptView, ProposedPlanView, RequestView, ThreadSnapshot } from "@planbridge/contracts"
import { ApprovalCard } from "./ApprovalCard.tsx"
import { ProposedPlanCard } from "./ProposedPlanCard.tsx"
import { QuestionCard } from "./QuestionCard.tsx"
import { TimelineItem } from "./TimelineItem.tsx"

type Entry =
  | { readonly at: string; readonly kind: "item"; readonly item: ItemView }
  | { readonly at: string; readonly kind: "prompt"; readonly prompt: PromptView }
  | { readonly at: string; readonly kind: "plan"; readonly plan: ProposedPlanView }
  | { readonly at: string; readonly kind: "request"; readonly request: RequestView }

/**
 * The thread in time order: messages, reasoning, tool calls, question cards, proposed plans and
 * approval requests. A request that carries a prompt or a plan shows as that card; the plan's
 * own streamed item is not repeated beside its card.
 */
export const Timeline = (props: { readonly client: PlanbridgeClient; readonly thread: ThreadSnapshot }) => {
  const t = props.thread
  const turnsWithPlans = new Set(t.proposedPlans.map((p) => p.turnId as string))
  const entries: Array<Entry> = [
    ...t.items
      .filter((i) => !(i.itemType === "plan" && turnsWithPlans.has(i.turnId)))
      .map((item) => ({ at: item.startedAt, kind: "item" as const, item })),
    ...t.prompts.map((prompt) => ({ at: prompt.createdAt, kind: "prompt" as const, prompt })),
    ...t.proposedPlans.map((plan) => ({ at: plan.createdAt, kind: "plan" as const, plan })),
    ...t.requests
      .filter((r) => r.promptId === null && !(r.kind === "plan_approval" && r.planId !== null))
      .map((request) => ({ at: request.createdAt, kind: "request" as const, request }))
  ].sort((a, b) => a.at.localeCompare(b.at))
  return (
    <section className="timeline" aria-label="Timeline">
      {entries.map((e) => {
        switch (e.kind) {
          case "item":
            // An item is keyed within its turn: a later turn may use an id again (issue 34).
            return (
              <TimelineItem
                key={JSON.stringify([e.item.turnId, e.item.itemId])}
                item={e.item}
                ended={t.state === "stopped"}
              />
            )
          case "prompt":
            return <QuestionCard key={e.prompt.promptId} client={props.client} view={e.prompt} />
          case "plan":
            return <ProposedPlanCard key={e.plan.planId} client={props.client} thread={t} plan={e.plan} />
          case "request":
            return <ApprovalCard key={e.request.requestId} client={props.client} request={e.request} />
        }
      })}
    </section>
  )
}
