/** The library's version and the API version it speaks (the `/b2b/v1` paths). */
export const VERSION = '0.1.0';
export const API_VERSION = 'v1';
