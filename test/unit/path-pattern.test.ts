import { describe, expect, it } from 'vitest'
import { PathPattern } from '../../src/http/path-pattern.js'

describe('PathPattern', () => {
  it('matches a fixed path by its text alone', () => {
    const pattern = new PathPattern('/v1/chat/completions')
    expect(pattern.fixed).toBe(true)
    expect(pattern.match('/v1/chat/completions')).toEqual({})
    expect(pattern.match('/v1/chat/completions/')).toBeUndefined()
    expect(pattern.match('/v1/chat')).toBeUndefined()
  })

  it('reads an id with dots and colons where a slash follows it (a Bedrock model id)', () => {
    const pattern = new PathPattern('/model/{model}/invoke')
    expect(pattern.match('/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke')).toEqual({
      model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    })
    expect(pattern.match('/model/a/b/invoke')).toBeUndefined()
    expect(pattern.match('/model//invoke')).toBeUndefined()
    expect(pattern.match('/model/m/invoke-with-response-stream')).toBeUndefined()
  })

  it('reads several parameters, the last up to a method after a colon (a Vertex path)', () => {
    const pattern = new PathPattern('/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:streamRawPredict')
    expect(
      pattern.match('/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict'),
    ).toEqual({ project: 'my-proj', location: 'us-east5', model: 'claude-sonnet-4-5@20250929' })
    expect(pattern.match('/v1/projects/p/locations/l/publishers/google/models/m:streamRawPredict')).toBeUndefined()
    expect(pattern.match('/v1/projects/p/locations/l/publishers/anthropic/models/m:rawPredict')).toBeUndefined()
  })

  it('lets a parameter followed by a colon hold slashes but not colons, as the Google paths read', () => {
    const pattern = new PathPattern('/v1beta/models/{model}:generateContent')
    expect(pattern.match('/v1beta/models/google/gemini-2.5-flash:generateContent')).toEqual({ model: 'google/gemini-2.5-flash' })
    expect(pattern.match('/v1beta/models/a:b:generateContent')).toBeUndefined()
    expect(pattern.match('/v1beta/models/:generateContent')).toBeUndefined()
  })

  it('gives a parameter that ends the pattern the rest of the path, and keeps values raw', () => {
    expect(new PathPattern('/v1/files/{id}').match('/v1/files/a%2Fb/c')).toEqual({ id: 'a%2Fb/c' })
    expect(new PathPattern('/v1/files/{id}').match('/v1/files/')).toBeUndefined()
  })

  it('refuses patterns it could not match unambiguously', () => {
    expect(() => new PathPattern('/x/{a}{b}')).toThrow(/touch/)
    expect(() => new PathPattern('/x/{a}/{a}')).toThrow(/twice/)
    expect(() => new PathPattern('/x/{a')).toThrow(/unclosed/)
    expect(() => new PathPattern('/x/{a-b}')).toThrow(/bad parameter/)
  })
})
