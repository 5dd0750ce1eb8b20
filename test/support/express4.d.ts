// Express 4 is installed under an alias to test the adapter on both majors; its API surface used here matches 5's types.
declare module 'express4' {
  import express from 'express'
  export default express
}
