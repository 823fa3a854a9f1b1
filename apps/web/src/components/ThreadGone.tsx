import type { PlanbridgeError } from "@planbridge/client"

/** The server no longer has this thread (e.g. its data dir was replaced): what is shown is all there is. */
export const ThreadGone = ({ error }: { readonly error: PlanbridgeError }) => (
  <div className="banner banner-error thread-gone" role="alert">
    This thread is no longer on this server ({error.code}); what you see is the last state received.
  </div>
)
