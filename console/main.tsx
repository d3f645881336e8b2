import { render } from 'preact'
render(<p>phog console</p>, document.getElementById('app')!)
