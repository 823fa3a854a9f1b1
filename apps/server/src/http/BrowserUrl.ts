/**
 * The address that opens the web UI already signed in: the token rides in the URL's fragment,
 * which browsers never send to the server (so it reaches no request log, proxy or Referer); the
 * page moves it into session storage and clears it from the address bar. Never in a query.
 */
export const browserUrl = (serverUrl: string, token: string): string => {
  const url = new URL(serverUrl)
  // A wildcard bind is not an address a browser can open; loopback reaches the same server.
  if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "127.0.0.1"
  url.pathname = "/"
  url.search = ""
  url.hash = `token=${encodeURIComponent(token)}`
  return url.toString()
}
